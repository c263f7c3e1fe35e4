"""Driving laws: functions of time with exact first and second derivatives, evaluated inside
the compiled kernels (so drivers also work in the C integrator's step loop).

    constant(c)                 f = c
    linear(value, rate)         f = value + rate t
    polynomial(c0, c1, ...)     f = c0 + c1 t + c2 t^2 + ...
    harmonic(a, b, omega, phase)  f = a + b sin(omega t + phase)
    function(fn)                fn(t) -> (f, f', f''), any Python callable: kinematics only
                                (evaluated in Python at the requested times; simulate's
                                compiled step loop cannot call Python, and files cannot hold it)

Angles are in radians and need no wrapping: a crank driven through many turns by
``linear(0, 2 pi)`` stays continuous.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import ModelError

__all__ = ["Law", "constant", "linear", "polynomial", "harmonic", "function", "law_from_dict"]

_FIELDS = {"constant": ("value",), "linear": ("value", "rate"), "polynomial": ("coefficients",),
           "harmonic": ("a", "b", "omega", "phase")}


@dataclass(frozen=True)
class Law:
    kind: str
    params: tuple

    @property
    def is_function(self) -> bool:
        return self.kind == "function"

    def compiled(self) -> tuple[int, list[float]]:
        """(kernel law kind, parameters): 0 polynomial coefficients, 1 harmonic a, b, w, phi,
        2 values supplied per time by the caller (a Python function)."""
        if self.kind == "function":
            return 2, []
        if self.kind == "harmonic":
            return 1, list(self.params)
        if self.kind == "polynomial":
            return 0, list(self.params)
        return 0, list(self.params)  # constant and linear are polynomials already

    def __call__(self, t: float) -> tuple[float, float, float]:
        """(f, f', f'') at time t (the same formulas as the kernels)."""
        if self.kind == "function":
            value = self.params[0](t)
            try:
                f = tuple(float(x) for x in value)
            except (TypeError, ValueError):
                f = ()
            if len(f) != 3 or not all(math.isfinite(x) for x in f):
                raise ValueError(f"law function returned {value!r} at t = {t}: expected three "
                                 "finite numbers (value, first and second derivative)")
            return f
        if self.kind == "harmonic":
            a, b, w, ph = self.params
            return (a + b * math.sin(w * t + ph), b * w * math.cos(w * t + ph),
                    -b * w * w * math.sin(w * t + ph))
        f = f1 = f2 = 0.0
        for c in reversed(self.params):
            f2 = f2 * t + 2.0 * f1
            f1 = f1 * t + f
            f = f * t + c
        return f, f1, f2

    def to_dict(self) -> dict:
        if self.kind == "function":
            raise ModelError("a law given as a Python function cannot be written to a model "
                             "file; use constant, linear, polynomial or harmonic")
        if self.kind == "polynomial":
            return {"law": "polynomial", "coefficients": list(self.params)}
        return {"law": self.kind, **dict(zip(_FIELDS[self.kind], self.params))}


def _num(what, x):
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ModelError(f"law: {what} must be a finite number, got {x!r}")
    return float(x)


def constant(value) -> Law:
    return Law("constant", (_num("value", value),))


def linear(value, rate) -> Law:
    return Law("linear", (_num("value", value), _num("rate", rate)))


def polynomial(*coefficients) -> Law:
    if not coefficients:
        raise ModelError("law: a polynomial needs at least one coefficient")
    return Law("polynomial", tuple(_num(f"coefficient {i}", c) for i, c in enumerate(coefficients)))


def harmonic(a, b, omega, phase=0.0) -> Law:
    return Law("harmonic", (_num("a", a), _num("b", b), _num("omega", omega),
                            _num("phase", phase)))


def function(fn) -> Law:
    """A driving law computed by ``fn(t) -> (f, f', f'')`` (kinematic analysis only)."""
    if not callable(fn):
        raise ModelError(f"law: function needs a callable, got {fn!r}")
    return Law("function", (fn,))


def law_from_dict(d) -> Law:
    """Inverse of Law.to_dict, validated."""
    if isinstance(d, Law):
        return d
    if not isinstance(d, dict) or d.get("law") not in _FIELDS:
        raise ModelError(f"law must be an object with 'law' one of {', '.join(_FIELDS)}, "
                         f"got {d!r}")
    kind = d["law"]
    fields = _FIELDS[kind]
    extra = sorted(set(d) - set(fields) - {"law"})
    missing = [f for f in fields if f not in d and not (kind == "harmonic" and f == "phase")]
    if extra or missing:
        raise ModelError(f"law '{kind}' takes {', '.join(fields)}"
                         + (f"; unknown: {', '.join(extra)}" if extra else "")
                         + (f"; missing: {', '.join(missing)}" if missing else ""))
    if kind == "polynomial":
        if not isinstance(d["coefficients"], list):
            raise ModelError("law 'polynomial': coefficients must be a list of numbers")
        return polynomial(*d["coefficients"])
    return {"constant": constant, "linear": linear, "harmonic": harmonic}[kind](
        *[d[f] for f in fields if f in d])
