"""Driving laws: functions of time with exact first and second derivatives, evaluated inside
the compiled kernels (so drivers also work in the C integrator's step loop)::

    constant(c)                 f = c
    linear(value, rate)         f = value + rate t
    polynomial(c0, c1, ...)     f = c0 + c1 t + c2 t^2 + ...
    harmonic(a, b, omega, phase)  f = a + b sin(omega t + phase)
    tabulated(t, values, interpolant="cubic")
                                measured data through a smooth interpolant: a not-a-knot
                                cubic spline (C2; "cubic") or a shape-preserving monotone
                                cubic (C1, no overshoot; "pchip"), both from SciPy; the end
                                values are held outside [t[0], t[-1]] (f' = f'' = 0 there)
    function(fn)                fn(t) -> (f, f', f''), any Python callable: kinematics only
                                (evaluated in Python at the requested times; simulate's
                                compiled step loop cannot call Python, and files cannot hold it)

Angles are in radians and need no wrapping: a crank driven through many turns by
``linear(0, 2 pi)`` stays continuous.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import real
from ..errors import ArgumentError, ModelError

__all__ = ["Law", "constant", "linear", "polynomial", "harmonic", "tabulated", "function",
           "law_from_dict"]

_FIELDS = {"constant": ("value",), "linear": ("value", "rate"), "polynomial": ("coefficients",),
           "harmonic": ("a", "b", "omega", "phase"), "tabulated": ("t", "values", "interpolant")}
_INTERPOLANTS = ("cubic", "pchip")


@dataclass(frozen=True)
class Law:
    kind: str
    params: tuple

    @property
    def is_function(self) -> bool:
        return self.kind == "function"

    def compiled(self) -> tuple[int, list[float]]:
        """(kernel law kind, parameters) as csrc/ld_laws.h reads them: 0 polynomial
        coefficients, 1 harmonic a, b, w, phi, 2 values supplied per time by the caller (a
        Python function), 3 piecewise cubic m, breakpoints, coefficients."""
        if self.kind == "function":
            return 2, []
        if self.kind == "tabulated":
            x, c = self._pieces()
            return 3, [float(len(x) - 1), *x.tolist(), *c.tolist()]
        if self.kind == "harmonic":
            return 1, list(self.params)
        if self.kind == "polynomial":
            return 0, list(self.params)
        return 0, list(self.params)  # constant and linear are polynomials already

    def _pieces(self):
        """Breakpoints x (m + 1,) and per interval the ascending coefficients (m, 4) of the
        interpolant (flattened), from SciPy."""
        from scipy.interpolate import CubicSpline, PchipInterpolator

        t, values, interpolant = self.params
        t, values = np.asarray(t), np.asarray(values)
        spline = (CubicSpline(t, values) if interpolant == "cubic"
                  else PchipInterpolator(t, values))
        coef = spline.c[::-1].T   # SciPy stores descending powers, (4, m)
        return t, np.ascontiguousarray(coef).ravel()

    def __call__(self, t: float) -> tuple[float, float, float]:
        """(f, f', f'') at time t (the same formulas as the kernels)."""
        if self.kind == "tabulated":
            x, c = self._pieces()
            c = c.reshape(-1, 4)
            if t < x[0] or t > x[-1]:
                i, s = (0, 0.0) if t < x[0] else (len(x) - 2, x[-1] - x[-2])
                return (float(c[i] @ [1.0, s, s * s, s**3]), 0.0, 0.0)
            i = min(int(np.searchsorted(x, t, side="right")) - 1, len(x) - 2)
            s = t - x[i]
            a, b, cc, d = c[i]
            return (a + s * (b + s * (cc + s * d)), b + s * (2 * cc + 3 * s * d),
                    2 * cc + 6 * s * d)
        if self.kind == "function":
            value = self.params[0](t)
            try:
                f = tuple(float(x) for x in value)
            except (TypeError, ValueError):
                f = ()
            if len(f) != 3 or not all(math.isfinite(x) for x in f):
                raise ArgumentError(f"law function returned {value!r} at t = {t}: expected three "
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
        if self.kind == "tabulated":
            return {"law": "tabulated", "t": list(self.params[0]),
                    "values": list(self.params[1]), "interpolant": self.params[2]}
        return {"law": self.kind, **dict(zip(_FIELDS[self.kind], self.params))}


def _num(what, x):
    return real("law", what, x)


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


def tabulated(t, values, interpolant: str = "cubic") -> Law:
    """Measured data ``values`` at strictly increasing times ``t`` (at least 2 points)
    through a smooth interpolant: ``"cubic"`` (not-a-knot cubic spline, twice continuously
    differentiable) or ``"pchip"`` (monotone piecewise cubic, no overshoot). Outside
    [t[0], t[-1]] the end value is held."""
    if not isinstance(interpolant, str) or interpolant not in _INTERPOLANTS:
        raise ModelError(f"law 'tabulated': interpolant must be one of "
                         f"{', '.join(_INTERPOLANTS)}, got {interpolant!r}")
    ts, vs = [], []
    for what, seq, out in (("t", t, ts), ("values", values, vs)):
        if isinstance(seq, (str, bytes, dict)) or not hasattr(seq, "__len__"):
            raise ModelError(f"law 'tabulated': {what} must be a list of numbers, got {seq!r}")
        out.extend(_num(f"{what}[{i}]", x) for i, x in enumerate(np.asarray(seq).tolist()
                                                                 if isinstance(seq, np.ndarray)
                                                                 else seq))
    if len(ts) < 2 or len(ts) != len(vs):
        raise ModelError(f"law 'tabulated': t and values must have the same length, at least "
                         f"2 (got {len(ts)} and {len(vs)})")
    bad = [i for i in range(1, len(ts)) if not ts[i] > ts[i - 1]]
    if bad:
        raise ModelError(f"law 'tabulated': t must be strictly increasing; t[{bad[0]}] = "
                         f"{ts[bad[0]]} follows {ts[bad[0] - 1]}")
    law = Law("tabulated", (tuple(ts), tuple(vs), interpolant))
    # The interpolant is made now, so that data it cannot represent is refused here: slopes
    # or coefficients beyond double precision (huge values, or times too close).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        try:
            _, coef = law._pieces()
        except ValueError:
            coef = np.array([np.inf])
    if not np.all(np.isfinite(coef)):
        raise ModelError("law 'tabulated': the interpolant of these values overflows (slopes "
                         "or curvatures beyond double precision: values too large for the "
                         "spacing of t)")
    return law


def function(fn) -> Law:
    """A driving law computed by ``fn(t) -> (f, f', f'')`` (kinematic analysis only)."""
    if not callable(fn):
        raise ModelError(f"law: function needs a callable, got {fn!r}")
    return Law("function", (fn,))


def law_from_dict(d) -> Law:
    """Inverse of Law.to_dict, validated."""
    if isinstance(d, Law):
        return d
    if not isinstance(d, dict) or not isinstance(d.get("law"), str) or d["law"] not in _FIELDS:
        raise ModelError(f"law must be an object with 'law' one of {', '.join(_FIELDS)}, "
                         f"got {d!r}")
    kind = d["law"]
    fields = _FIELDS[kind]
    extra = sorted(set(d) - set(fields) - {"law"})
    optional = {"harmonic": ("phase",), "tabulated": ("interpolant",)}.get(kind, ())
    missing = [f for f in fields if f not in d and f not in optional]
    if extra or missing:
        raise ModelError(f"law '{kind}' takes {', '.join(fields)}"
                         + (f"; unknown: {', '.join(extra)}" if extra else "")
                         + (f"; missing: {', '.join(missing)}" if missing else ""))
    if kind == "polynomial":
        if not isinstance(d["coefficients"], list):
            raise ModelError("law 'polynomial': coefficients must be a list of numbers")
        return polynomial(*d["coefficients"])
    if kind == "tabulated":
        return tabulated(d["t"], d["values"], d.get("interpolant", "cubic"))
    return {"constant": constant, "linear": linear, "harmonic": harmonic}[kind](
        *[d[f] for f in fields if f in d])
