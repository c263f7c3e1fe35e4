"""Named parameters of a model: paths into its file form (:mod:`linkdyn.modelfile`, or a
linkage file of :mod:`linkdyn.geometric`), read and set by sweeps (:func:`linkdyn.sweep`) and
by design (sensitivities, synthesis).

A path is ``gravity``, ``ground.<point>``, or ``<section>.<name>.<field>[.<key>...]`` with
the section one of ``bodies``, ``joints``, ``drivers``, ``forces``, ``contacts``,
``markers`` and the entry named by its ``name`` field: ``bodies.L5.length``,
``bodies.crank.points.B``, ``drivers.crank.law.rate``, ``forces.S.stiffness``, and in a
linkage file ``joints.B.coordinates``. A last key ``x``, ``y``, ``z`` (or ``0``, ``1``, ``2``)
takes one component of a list value: ``ground.P2.x``, ``bodies.crank.points.B.y``,
``joints.B.coordinates.x``, ``gravity.y``; two such keys take an entry of a matrix,
``bodies.top.inertia.z.z`` (a spatial body's inertia tensor, row then column; a product of
inertia such as ``bodies.top.inertia.x.y`` sets its mirror ``y.x`` too). Scalar
parameters (what sensitivities take) are paths that end at a number.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from ..errors import ModelError

__all__ = ["SECTIONS", "is_model_parameter", "inertia_entry", "get_parameter",
           "set_parameter", "with_parameters", "apply_parameters"]

SECTIONS = ("bodies", "joints", "drivers", "forces", "contacts", "markers")
_COMPONENTS = {"x": 0, "y": 1, "z": 2, "0": 0, "1": 1, "2": 2}
_SINGULAR = {"bodies": "body", "forces": "force element", "joints": "joint",
             "drivers": "driver", "contacts": "contact", "markers": "marker"}


def is_model_parameter(name: str) -> bool:
    """Whether ``name`` is a path into the model (not, say, a run option)."""
    head = name.split(".", 1)[0]
    return head in ("gravity", "ground") or head in SECTIONS


def inertia_entry(path: str):
    """(row, column) of a spatial body's inertia tensor entry that ``path`` names
    (``bodies.<body>.inertia.<row>.<column>``), or None for any other path."""
    parts = path.split(".")
    if len(parts) == 5 and parts[0] == "bodies" and parts[2] == "inertia" and \
            parts[3] in _COMPONENTS and parts[4] in _COMPONENTS:
        return _COMPONENTS[parts[3]], _COMPONENTS[parts[4]]
    return None


def _locate(data: dict, path: str):
    """(container, key, component) of ``path`` in ``data``: the value is container[key],
    or its element ``component`` when that is not None."""
    parts = path.split(".")
    if parts[0] == "gravity":
        container, key, rest = data, "gravity", parts[1:]
        if "gravity" not in data:
            data["gravity"] = [0.0, -9.81]
    elif parts[0] == "ground":
        if len(parts) < 2:
            raise ModelError(f"parameter {path!r}: expected 'ground.<point>'")
        ground = data.get("ground", {})
        if parts[1] not in ground:
            known = ", ".join(ground) or "none"
            raise ModelError(f"parameter {path!r}: no ground point named {parts[1]!r} "
                             f"(known: {known})")
        container, key, rest = ground, parts[1], parts[2:]
    elif parts[0] in SECTIONS:
        if len(parts) < 3:
            raise ModelError(f"parameter {path!r}: expected '{parts[0]}.<name>.<field>'")
        entries = [e for e in data.get(parts[0], []) if e.get("name") == parts[1]]
        if not entries:
            known = ", ".join(e.get("name", "?") for e in data.get(parts[0], [])) or "none"
            raise ModelError(f"parameter {path!r}: no {_SINGULAR[parts[0]]} named "
                             f"{parts[1]!r} (known: {known})")
        container, key, rest = entries[0], parts[2], parts[3:]
        while rest and isinstance(container.get(key), dict):
            container, key, rest = container[key], rest[0], rest[1:]
    else:
        raise ModelError(f"parameter {path!r}: a model parameter starts with gravity, ground "
                         f"or one of {', '.join(SECTIONS)}")
    if not rest:
        return container, key, None
    if 1 <= len(rest) <= 2 and all(r in _COMPONENTS for r in rest) and \
            isinstance(container.get(key), list):
        index = _COMPONENTS[rest[0]]
        if index >= len(container[key]):
            raise ModelError(f"parameter {path!r}: {key!r} has {len(container[key])} "
                             f"components")
        if len(rest) == 1:
            return container, key, index
        # an entry of a matrix (a spatial body's inertia tensor): row, then column
        row = container[key][index]
        column = _COMPONENTS[rest[1]]
        if not isinstance(row, list) or column >= len(row):
            raise ModelError(f"parameter {path!r}: {key!r} is not a matrix with that entry")
        return container[key], index, column
    raise ModelError(f"parameter {path!r}: {'.'.join(rest)!r} does not name a field "
                     f"of {key!r}")


def get_parameter(data: dict, path: str):
    """The value at ``path`` in a model-file dict (:class:`ModelError` names a bad path)."""
    container, key, component = _locate(data, path)
    if isinstance(container, dict) and key not in container:
        fields = ", ".join(k for k in container if k not in ("type", "name")) or "none"
        raise ModelError(f"parameter {path!r}: the entry has no field {key!r} (its "
                         f"fields: {fields})")
    value = container[key]
    return value if component is None else value[component]


def set_parameter(data: dict, path: str, value) -> None:
    """Set ``path`` in a model-file dict, in place."""
    container, key, component = _locate(data, path)
    if component is not None:
        container[key] = list(container[key])
        container[key][component] = value
        if inertia_entry(path) is not None and component != key and \
                component < len(container) and isinstance(container[component], list) and \
                key < len(container[component]):
            # an inertia tensor's product of inertia: its mirror too (it stays symmetric)
            container[component] = list(container[component])
            container[component][key] = value
        return
    if key in ("angle", "omega") and "position" in container:
        # A body's file form stores u and ud; an angle (angular velocity) replaces them.
        container.pop("u" if key == "angle" else "ud", None)
    container[key] = value


def with_parameters(data: dict, values: Mapping) -> dict:
    """A copy of a model-file dict with the parameters ``values`` ({path: value}) set, that
    shares every part the paths do not reach: the top level, the ground points and the named
    entries on a path are copied (deep for an entry, which is small), the rest is the
    original's. For the many members of a sensitivity, where a deep copy of the whole model
    would cost more than compiling it. The readers of model files never change their input,
    so sharing is safe."""
    data = dict(data)
    for name, value in values.items():
        parts = name.split(".")
        if parts[0] == "ground" and isinstance(data.get("ground"), dict):
            data["ground"] = dict(data["ground"])
        elif parts[0] in SECTIONS and len(parts) > 1 and isinstance(data.get(parts[0]), list):
            data[parts[0]] = [copy.deepcopy(e) if isinstance(e, dict) and
                              e.get("name") == parts[1] else e for e in data[parts[0]]]
        set_parameter(data, name, value)
    return data


def apply_parameters(data: dict, case: Mapping) -> dict:
    """A copy of a model-file dict with the case's model parameters set (names that are not
    model parameters, such as run options, are left out)."""
    data = copy.deepcopy(data)
    for name, value in case.items():
        if is_model_parameter(name):
            set_parameter(data, name, value)
    return data
