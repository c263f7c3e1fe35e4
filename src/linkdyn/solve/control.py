"""Feedback control written in Python: what a controller sees at a sample
(:class:`ControlState`) and how its outputs become the held inputs of motors and servos
(zero-order hold; see ``controller`` in :func:`linkdyn.simulate`)."""

from __future__ import annotations

import math

import numpy as np

from ..compile.model import Model
from ..elements.records import INPUT_TARGET
from ..errors import ControllerError, UnknownNameError, name_list

__all__ = ["ControlState", "apply_controller"]


class ControlState:
    """What a controller sees at a sample time: ``t``, the coordinates ``q`` and velocities
    ``v`` (read-only arrays) and helpers for the usual measurements."""

    def __init__(self, model: Model, t: float, q: np.ndarray, v: np.ndarray, run):
        self.model, self.t, self._run = model, t, run
        self.q, self.v = q, v
        self.q.flags.writeable = False
        self.v.flags.writeable = False

    def element_coordinate(self, name: str) -> tuple[float, float]:
        """(s, s') of force element ``name``'s coordinate: a joint's relative angle (rad,
        continuous over turns) or slide (m), a spring's length (m) and their rates."""
        info = self.model.force_info
        if name not in info["elements"] or not info["elements"][name][0]:
            raise UnknownNameError(f"model {self.model.name!r} has no force element {name!r} "
                                   f"with a coordinate (force elements: "
                                   f"{name_list(self.model.force_names)})")
        rec, _ = self.model.kernels.force_values(self.q, self.v, self.t, self._run)
        r = info["elements"][name][0][0]
        return float(rec[r, 0]), float(rec[r, 1])

    def marker(self, name: str) -> np.ndarray:
        """Position (2,) of marker ``name``."""
        return self.model.marker_positions(self.q)[self.model.marker_index(name)]

    def marker_velocity(self, name: str) -> np.ndarray:
        """Velocity (2,) of marker ``name``."""
        return self.model.marker_velocities(self.v)[self.model.marker_index(name)]


def apply_controller(model, controller, t, y, run):
    """Call the controller at sample time t and hold its inputs; returns whether any input
    changed (then the integrator restarts: the forces jump)."""
    nq = model.nq
    names = model.force_info["inputs"]
    modes = model.kernels.arrays["rec_input_mode"]
    recs = model.force_info["elements"]
    state = ControlState(model, t, y[:nq].copy(), y[nq:2 * nq].copy(), run)
    try:
        out = controller(t, state)
    except Exception as exc:
        raise ControllerError(f"model {model.name!r}: the controller raised "
                              f"{type(exc).__name__} at t = {t:.9g} s: {exc}", t, 0.0) from exc
    if out is None:
        return False
    if not hasattr(out, "items"):
        raise ControllerError(f"model {model.name!r}: the controller must return a mapping "
                              f"{{motor or servo name: input}}, got {type(out).__name__} at "
                              f"t = {t:.9g} s", t, 0.0)
    changed = False
    for name, value in out.items():
        if not isinstance(name, str) or name not in names:
            raise ControllerError(f"model {model.name!r}: the controller returned an input for "
                                  f"{name!r} at t = {t:.9g} s; motors and servos: "
                                  f"{', '.join(names) or 'none'}", t, 0.0)
        try:
            value = float(value)
        except (TypeError, ValueError, OverflowError):
            value = math.nan
        if not math.isfinite(value):
            raise ControllerError(f"model {model.name!r}: the controller's input for {name!r} "
                                  f"at t = {t:.9g} s must be a finite number, got {out[name]!r}",
                                  t, 0.0)
        i = names.index(name)
        target = modes[recs[name][0][0]] == INPUT_TARGET
        if run.inputs[i] != value or run.active[i] != target:
            changed = True
        run.inputs[i] = value
        run.active[i] = int(target)
    return changed
