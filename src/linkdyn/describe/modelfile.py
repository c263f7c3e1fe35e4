"""Model files: JSON documents describing a model, validated through :class:`ModelBuilder`.
(Linkages of points and lines have a file form of their own, read here too: see
:mod:`linkdyn.geometric`.)

Format (version 1)::

    {
      "linkdyn_model": 1,
      "name": "fourbar",
      "gravity": [0.0, -9.81],                      # optional, m/s^2
      "ground": {"O": [0.0, 0.0], "C": [0.4, 0.0]}, # optional: named fixed points
      "bodies": [
        {"type": "bar", "name": "crank", "length": 0.1, "density": 1.0,   # or "mass"
         "position": [0.05, 0.0], "u": [1.0, 0.0],                        # or "angle" (rad)
         "velocity": [0.0, 0.5], "ud": [0.0, 10.0],                       # or "omega" (rad/s)
         "inertia": 1e-4, "points": {"p": [0.02, 0.0]}, "hold": true},    # optional
        {"type": "body", "name": "plate", "mass": 2.0, "inertia": 0.1,
         "points": {"hole": [0.1, 0.05]}, "position": [0.3, 0.1]}
      ],
      "joints": [{"type": "revolute", "name": "J1", "first": "crank.a", "second": "ground.O"},
                 {"type": "prismatic", "name": "S", "first": "ground.O", "second": "plate.cm",
                  "axis": 0.0, "angle": 0.0}],               # axis, angle optional (rad)
      "drivers": [{"type": "angle", "name": "motor", "joint": "J1",
                   "law": {"law": "linear", "value": 0.0, "rate": 6.283}},
                  {"type": "slide", "name": "ram", "joint": "S",
                   "law": {"law": "harmonic", "a": 0.05, "b": -0.08, "omega": 3.14, "phase": 0.8}},
                  {"type": "coordinate", "name": "lift", "point": "plate.hole", "axis": "y",
                   "law": {"law": "polynomial", "coefficients": [0.1, 0.0, 0.5]}}],
      "forces": [{"type": "spring_damper", "name": "S", "first": "ground.C",
                  "second": "plate.hole", "stiffness": 200.0, "damping": 1.5,
                  "free_length": 0.3},                        # or a law: an actuator
                 {"type": "torsional_spring_damper", "name": "T", "joint": "J1",
                  "stiffness": 2.0, "damping": 0.01, "rest_angle": 0.0},
                 {"type": "joint_damper", "name": "D", "joint": "S", "damping": 0.5},
                 {"type": "motor", "name": "M", "joint": "J1", "law": 0.2,
                  "rotor_inertia": 1e-5, "gear_ratio": 50.0},
                 {"type": "servo", "name": "V", "joint": "J1",
                  "target": {"law": "linear", "value": 0.0, "rate": 1.0},
                  "kp": 40.0, "kd": 1.0},
                 {"type": "torque", "name": "Tq", "body": "plate", "law": 0.1},
                 {"type": "force", "name": "F", "point": "plate.hole", "law_x": 0.0,
                  "law_y": {"law": "tabulated", "t": [0, 1, 2], "values": [0, 5, 0]},
                  "frame": "global"}],                      # see linkdyn.forces
      "markers": [{"name": "tip", "point": "crank.b"}]
    }

Fields that take a law (free_length, law, target, law_x, law_y) also take a plain number.
Contacts go in a ``"contacts"`` list: ``{"name", "point", "line_point", "line_angle",
"radius", "model", "stiffness", "exponent", "damping" | "restitution"}`` (see
:mod:`linkdyn.contacts`). Gear pairs and racks go in a ``"gears"`` list:
``{"type": "gear_pair", "name", "first", "second", "teeth": [z1, z2], "module"}`` (optional
``internal``, ``carrier``, ``pressure_angle``) or ``{"type": "rack_and_pinion", "name",
"pinion", "rack", "teeth", "module"}`` (see :mod:`linkdyn.elements.gears`). Joint stops
go in a ``"stops"`` list: ``{"type": "joint_stop", "name", "joint", "lower", "upper",
"stiffness", "exponent", "model", "damping" | "restitution"}`` (see
:mod:`linkdyn.elements.stops`). A revolute or prismatic joint with clearance has a
``"clearance"`` object: ``{"size", "stiffness", "exponent", "model", "damping" |
"restitution"}``, a prismatic joint's also ``"length"`` and ``"height"`` (see
:mod:`linkdyn.elements.clearance`). Cams and their followers go in a ``"cams"`` list:
``{"type": "cam_follower", "name", "cam", "follower", "guide"}`` with ``"motion"`` (a list of
``{"motion", "angle", "lift", "law"}``) or ``"profile"`` (a list of points ``[x, y]``) and
optional ``shape``, ``radius``, ``phase``, ``turning``, ``face_angle`` (see
:mod:`linkdyn.elements.cams`).

Every field is checked: a missing required field, an unknown field, a value of the wrong type
or outside its range raises :class:`ModelFileError` naming the file, the field
(``bodies[2].length``) and what was expected. Saving writes the canonical form (orientation
as ``u``, angular velocity as ``ud``); loading a saved file gives an equal description.
"""

from __future__ import annotations

import json
from dataclasses import replace
import os
from pathlib import Path

from .._checks import as_file_error, check_fields, checked_path, input_file_problem
from ..elements import cams, contacts, forces, gears, joint_friction, stops
from ..elements import spatial as _spatial
from ..elements.description import FORMAT_VERSION, Description, dumps, save
from ..elements.description import to_dict as _planar_to_dict
from ..errors import ModelError, ModelFileError
from .builder import ModelBuilder, name_or_gravity, read_run_defaults
from . import geometric

__all__ = ["FORMAT_VERSION", "load", "loads", "save", "dumps", "to_dict", "from_dict"]

_KINEMATIC = {"position", "angle", "u", "velocity", "omega", "ud", "hold", "points"}
_BODY_FIELDS = {
    "bar": ({"type", "name", "length"}, {"density", "mass", "inertia"} | _KINEMATIC),
    "body": ({"type", "name", "mass", "inertia"}, set(_KINEMATIC)),
}
_JOINT_FIELDS = {"revolute": ({"type", "name", "first", "second"}, {"clearance"}),
                 "prismatic": ({"type", "name", "first", "second"},
                               {"axis", "angle", "clearance"})}
_DRIVER_FIELDS = {"angle": ({"type", "name", "joint", "law"}, set()),
                  "slide": ({"type", "name", "joint", "law"}, set()),
                  "coordinate": ({"type", "name", "point", "axis", "law"}, set())}
_MARKER_FIELDS = ({"name", "point"}, set())
_TOP_FIELDS = ({"linkdyn_model", "name", "bodies"},
               {"gravity", "ground", "joints", "markers", "drivers", "forces", "contacts",
                "gears", "cams", "stops", "notes", "kinematic", "run_defaults"})


def to_dict(desc) -> dict:
    """The canonical JSON-ready form of a planar or spatial description."""
    if isinstance(desc, _spatial.SpatialDescription):
        return _spatial.to_dict(desc)
    return _planar_to_dict(desc)


def from_dict(data, path=None) -> Description:
    """Validate a decoded model file and return its description (a
    :class:`Description`, or for ``"space": "spatial"`` a spatial one)."""
    if isinstance(data, dict) and data.get("space") == "spatial":
        from .spatialfile import from_dict as spatial_from_dict

        return spatial_from_dict(data, path)
    return _planar_from_dict(data, path)


def _planar_from_dict(data, path) -> Description:
    check_fields(data, "top level", *_TOP_FIELDS, path)
    notes = data.get("notes", [])
    if not (isinstance(notes, str) or
            (isinstance(notes, list) and all(isinstance(x, str) for x in notes))):
        raise ModelFileError("notes must be a string or a list of strings (documentation "
                             "only)", path, "top level")
    kinematic = data.get("kinematic", False)
    if not isinstance(kinematic, bool):
        raise ModelFileError(f"kinematic must be true or false, got {kinematic!r}", path,
                             "kinematic")
    version = data["linkdyn_model"]
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise ModelFileError(f"unsupported format version {version!r} (this linkdyn reads "
                             f"version {FORMAT_VERSION})", path, "linkdyn_model")
    if isinstance(data["bodies"], list) and not data["bodies"]:
        raise ModelFileError("the model has no bodies (at least one is needed)", path,
                             "bodies")

    def call(where, fn, *args, **kwargs):
        as_file_error(path, where, fn, *args, **kwargs)

    builder = None

    def make():
        nonlocal builder
        builder = ModelBuilder(data["name"], gravity=data.get("gravity", (0.0, -9.81)))

    call(name_or_gravity(data), make)
    read_run_defaults(data, path, builder)
    ground = data.get("ground", {})
    if not isinstance(ground, dict):
        raise ModelFileError("expected an object of name: [x, y]", path, "ground")
    for gname, xy in ground.items():
        call(f"ground.{gname}", builder.add_ground_point, gname, xy)

    for key, table in (("bodies", _BODY_FIELDS), ("joints", _JOINT_FIELDS),
                       ("drivers", _DRIVER_FIELDS)):
        for where, entry, kind in _typed_items(data, key, table, path):
            check_fields(entry, where, *table[kind], path)
            kwargs = {k: v for k, v in entry.items() if k not in ("type", "name")}
            if key == "bodies":
                fn = builder.add_bar if kind == "bar" else builder.add_body
                call(where, fn, entry["name"], **kwargs)
            elif kind == "revolute":
                call(where, builder.add_revolute, entry["name"], entry["first"],
                     entry["second"], clearance=entry.get("clearance"))
            elif kind == "prismatic":
                call(where, builder.add_prismatic, entry["name"], **kwargs)
            elif kind == "coordinate":
                call(where, builder.add_coordinate_driver, entry["name"], **kwargs)
            else:
                fn = builder.add_angle_driver if kind == "angle" else builder.add_slide_driver
                call(where, fn, entry["name"], **kwargs)

    _typed_entries(data, "forces", {**forces.FILE_TYPES,
                                    "joint_friction": joint_friction.FILE_TYPE}, path, builder)

    items = data.get("contacts", [])
    if not isinstance(items, list):
        raise ModelFileError("expected a list of objects", path, "contacts")
    for n, entry in enumerate(items):
        where = f"contacts[{n}]"
        check_fields(entry, where, *contacts.FILE_FIELDS, path)
        kwargs = {k: v for k, v in entry.items() if k != "name"}
        call(where, builder.add_contact, entry["name"], **kwargs)

    _typed_entries(data, "gears", gears.FILE_TYPES, path, builder)
    _typed_entries(data, "cams", cams.FILE_TYPES, path, builder)
    _typed_entries(data, "stops", stops.FILE_TYPES, path, builder)
    markers = data.get("markers", [])
    if not isinstance(markers, list):
        raise ModelFileError("expected a list of objects", path, "markers")
    for n, entry in enumerate(markers):
        check_fields(entry, f"markers[{n}]", *_MARKER_FIELDS, path)
        call(f"markers[{n}]", builder.add_marker, entry["name"], entry["point"])
    return replace(builder.description(), kinematic=kinematic)


def _typed_items(data, key, types, path):
    """(where, entry, type) of each entry of list ``key``, checked to be an object with a
    ``type`` among ``types``' keys; ModelFileError naming the entry otherwise."""
    items = data.get(key, [])
    if not isinstance(items, list):
        raise ModelFileError("expected a list of objects", path, key)
    for n, entry in enumerate(items):
        where = f"{key}[{n}]"
        if not isinstance(entry, dict):
            raise ModelFileError(f"expected an object, got {type(entry).__name__}", path, where)
        kind = entry.get("type")
        if not isinstance(kind, str) or kind not in types:
            raise ModelFileError(f"field 'type' must be one of "
                                 f"{', '.join(sorted(types))}, got {kind!r}", path, where)
        yield where, entry, kind


def _typed_entries(data, key, types, path, builder) -> None:
    """The entries of list ``key`` (each an object with a ``type`` of ``types``: builder
    method, required and optional fields) added to ``builder``."""
    for where, entry, kind in _typed_items(data, key, types, path):
        method, required, optional = types[kind]
        check_fields(entry, where, required | {"type", "name"}, optional, path)
        kwargs = {k: v for k, v in entry.items() if k not in ("type", "name")}
        as_file_error(path, where, getattr(builder, method), entry["name"], **kwargs)


def loads(text: str, path=None):
    """Parse a model file's text: its :class:`Description` (a planar linkage file's too), or
    for a spherical or spatial linkage file its :class:`linkdyn.geometric.Linkage`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelFileError(f"not valid JSON: {exc.msg} at line {exc.lineno} column "
                             f"{exc.colno}", path) from None
    except RecursionError:
        raise ModelFileError("not a model file: nested too deeply", path) from None
    except ValueError as exc:   # e.g. an integer beyond Python's digit limit
        raise ModelFileError(f"not a model file: {exc}", path) from None
    if _depth(data) > MAX_DEPTH:
        # Model files are a few levels deep; a document that parses at hundreds of levels
        # would exhaust the stack later, wherever a recursive step meets it.
        raise ModelFileError(f"not a model file: nested deeper than {MAX_DEPTH} levels", path)
    if isinstance(data, dict) and "linkdyn_linkage" in data:
        # A linkage of points and lines (linkdyn.geometric), compiled to bodies and joints;
        # a spherical or spatial one is returned as it is (its build() compiles it to
        # natural coordinates).
        linkage = geometric.from_dict(data, path)
        if linkage.kind != geometric.PLANAR:
            return linkage
        try:
            return linkage.description()
        except ModelError as exc:
            raise ModelFileError(str(exc), path, entry=exc.entry) from None
    return from_dict(data, path)


#: The deepest nesting a model or linkage file may have (they need six levels).
MAX_DEPTH = 32


def _depth(data) -> int:
    """Nesting depth of a decoded JSON document, without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        if isinstance(node, dict):
            stack.extend((v, level + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, level + 1) for v in node)
    return deepest


def load(path):
    """Read and validate a model file (what :func:`loads` returns)."""
    path = os.fspath(checked_path("load", path))
    problem = input_file_problem(path)
    if problem:
        raise ModelFileError(f"cannot read the model file: it {problem}", path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ModelFileError(f"cannot read the model file: {exc.strerror}", path) from None
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"not a model file: not UTF-8 text (byte {exc.start})",
                             path) from None
    return loads(text, path)


