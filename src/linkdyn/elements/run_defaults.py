"""A model's own run settings: what the ``linkdyn`` command uses where its options are not
given.

A model knows things about how it is meant to be run that its bodies and joints do not
say: Andrews' squeezing mechanism is a 0.03 s benchmark (the command's 10 s would take
minutes), Bricard's linkage is overconstrained by design (its redundant rows are to be
allowed), the spherical Watt-I linkage's input rocks between limit positions (the analysis
runs the input back at them). These settings travel with the model's description and its
model file (``"run_defaults": {"t_end": 0.03}``); the command's options override them.

Keys
----
t_end : float
    Horizon (s) of ``linkdyn simulate``, ``animate`` and ``kinematics``.
redundant : {"raise", "allow"}
    Default of ``--redundant``.
at_limit : {"raise", "reverse"}
    Default of ``--at-limit`` (kinematic analysis).

The Python API does not read them: ``linkdyn.simulate(model, t_end)`` takes what it is
given. ``model.run_defaults`` (a read-only mapping) holds them for a caller that wants to.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from ..errors import ModelError

__all__ = ["RUN_DEFAULT_KEYS", "checked_run_defaults", "as_mapping"]

#: The settings a model can carry, with what each accepts.
RUN_DEFAULT_KEYS = {
    "t_end": "a positive finite number of seconds",
    "redundant": "'raise' or 'allow'",
    "at_limit": "'raise' or 'reverse'",
}
_CHOICES = {"redundant": ("raise", "allow"), "at_limit": ("raise", "reverse")}


def checked_run_defaults(where: str, settings) -> tuple:
    """``settings`` (a mapping key -> value) validated: a sorted tuple of (key, value) pairs,
    the form descriptions keep. Raises ModelError naming ``where`` and the entry."""
    if settings is None:
        return ()
    if not hasattr(settings, "items"):
        raise ModelError(f"{where}: run_defaults must be a mapping of "
                         f"{', '.join(RUN_DEFAULT_KEYS)}, got {type(settings).__name__}")
    out = {}
    for key, value in settings.items():
        if key not in RUN_DEFAULT_KEYS:
            raise ModelError(f"{where}: unknown run default {key!r} (known: "
                             f"{', '.join(RUN_DEFAULT_KEYS)})")
        if key == "t_end":
            ok = (not isinstance(value, bool) and isinstance(value, (int, float))
                  and math.isfinite(value) and value > 0)
            value = float(value) if ok else value
        else:
            ok = isinstance(value, str) and value in _CHOICES[key]
        if not ok:
            raise ModelError(f"{where}: run default {key} must be {RUN_DEFAULT_KEYS[key]}, "
                             f"got {value!r}")
        out[key] = value
    return tuple(sorted(out.items()))


def as_mapping(pairs) -> MappingProxyType:
    """A description's run defaults as a read-only mapping."""
    return MappingProxyType(dict(pairs or ()))
