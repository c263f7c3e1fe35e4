"""Spatial model files: the JSON form of a spatial model (bodies in natural coordinates,
:mod:`linkdyn.elements.spatial`), validated through
:class:`~linkdyn.describe.spatial.SpatialModelBuilder`. ``linkdyn.load_model(path)`` reads
it like any model file; ``SpatialModel.save(path)`` writes it.

Format (version 1)::

    {
      "linkdyn_model": 1,
      "space": "spatial",
      "name": "top",
      "gravity": [0.0, 0.0, -9.81],                    # optional, m/s^2
      "ground": {"O": [0.0, 0.0, 0.0]},                # optional: named fixed points
      "bodies": [
        {"name": "top", "mass": 1.0,
         "inertia": [0.004, 0.004, 0.002],             # 3 moments or a 3 x 3 tensor, body axes
                                                       # ([0, I, I]: a rod, points on its axis)
         "points": {"pivot": [0.0, 0.0, -0.1]},        # optional, body axes
         "position": [0.0, 0.0, 0.1],                  # optional, the centre of mass
         "orientation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],   # optional, body to global
         "velocity": [0, 0, 0], "angular_velocity": [0, 0, 50]}   # optional, global
      ],
      "joints": [{"type": "spherical", "name": "pivot", "first": "top.pivot",
                  "second": "ground.O"},
                 # "revolute", "cylindrical", "prismatic", "point_line": with "axis"
                 # [x, y, z] (global, at the initial configuration); "planar",
                 # "planar_slide", "point_plane": "normal" [x, y, z]; "universal": "axis_first",
                 # "axis_second"; "rigid": no axis
                ],
      "drivers": [{"type": "angle", "name": "motor", "joint": "hinge",
                   "law": {"law": "linear", "value": 0.0, "rate": 6.283}},
                  # "distance": "first", "second"; "coordinate": "point", "axis" ("x"|"y"|"z")
                 ],
      "forces": [{"type": "spring_damper", "name": "s", "first": "top.tip",
                  "second": "ground.O", "stiffness": 100.0, "damping": 0.5},
                 # "torsional_spring_damper", "joint_damper", "motor", "servo",
                 # "flexible_joint", "force", "torque": the fields of the builder's
                 # add_<type> (linkdyn.elements.spatial_forces)
                ],
      "contacts": [{"name": "floor", "point": "top.tip", "plane_point": "ground.O",
                    "normal": [0, 0, 1], "radius": 0.01, "stiffness": 1e7,
                    "exponent": 1.5, "damping": 0.2}],       # add_contact's fields
      "markers": [{"name": "tip", "point": "top.tip"}]
    }

Every field is checked: a missing or unknown field, or a value the builder refuses, raises
:class:`~linkdyn.errors.ModelFileError` naming the file and the field (``bodies[0].inertia``).
Saving writes the canonical form; loading a saved file gives an equal description.
"""

from __future__ import annotations

import json
from pathlib import Path

from .._checks import as_file_error, check_fields, checked_path
from ..elements.description import _no_negative_zero
from ..elements.spatial import SpatialDescription, to_dict
from ..elements.spatial_contacts import FILE_FIELDS as _CONTACT
from ..elements.gears import SPATIAL_FILE_TYPES
from ..elements.stops import FILE_TYPES as STOP_TYPES
from ..elements.spatial_forces import FILE_TYPES as _FORCES
from ..elements.joint_friction import FILE_TYPE as FRICTION_TYPE
from ..errors import ModelFileError
from .builder import name_or_gravity, read_run_defaults
from .spatial import SpatialModelBuilder

__all__ = ["from_dict", "dumps", "save"]

_TOP = ({"linkdyn_model", "space", "name", "bodies"},
        {"gravity", "ground", "joints", "drivers", "forces", "contacts", "markers", "notes",
         "run_defaults", "gears", "stops"})
_BODY = ({"name", "mass", "inertia"},
         {"points", "position", "orientation", "velocity", "angular_velocity"})
_JOINTS = {"spherical": (set(), "add_spherical"), "revolute": ({"axis"}, "add_revolute"),
           "cylindrical": ({"axis"}, "add_cylindrical"),
           "prismatic": ({"axis"}, "add_prismatic"),
           "universal": ({"axis_first", "axis_second"}, "add_universal"),
           "rigid": (set(), "add_rigid"), "planar": ({"normal"}, "add_planar"),
           "planar_slide": ({"normal"}, "add_planar_slide"),
           "point_plane": ({"normal"}, "add_point_on_plane"),
           "point_line": ({"axis"}, "add_point_on_line")}
_DRIVERS = {"angle": ({"joint"}, "add_angle_driver"),
            "distance": ({"first", "second"}, "add_distance_driver"),
            "coordinate": ({"point", "axis"}, "add_coordinate_driver")}


def from_dict(data, path=None) -> SpatialDescription:
    """Validate a decoded spatial model file and return its description."""
    check_fields(data, "top level", *_TOP, path)
    if isinstance(data["linkdyn_model"], bool) or data["linkdyn_model"] != 1:
        raise ModelFileError(f"unsupported format version {data['linkdyn_model']!r} (this "
                             "linkdyn reads version 1)", path, "linkdyn_model")
    if data["space"] != "spatial":
        raise ModelFileError(f"space must be 'spatial', got {data['space']!r}", path, "space")

    def call(where, fn, *args, **kwargs):
        return as_file_error(path, where, fn, *args, **kwargs)

    b = call(name_or_gravity(data), SpatialModelBuilder, data["name"],
             gravity=data.get("gravity", (0.0, 0.0, -9.81)))
    read_run_defaults(data, path, b)
    ground = data.get("ground", {})
    if not isinstance(ground, dict):
        raise ModelFileError("expected an object of name: [x, y, z]", path, "ground")
    for name, xyz in ground.items():
        call(f"ground.{name}", b.add_ground_point, name, xyz)
    for key in ("bodies", "joints", "drivers", "forces", "contacts", "gears", "stops",
                "markers"):
        items = data.get(key, [])
        if not isinstance(items, list):
            raise ModelFileError("expected a list of objects", path, key)
        for n, entry in enumerate(items):
            where = f"{key}[{n}]"
            if key == "bodies":
                check_fields(entry, where, *_BODY, path)
                call(where, b.add_body, entry["name"],
                     **{k: v for k, v in entry.items() if k != "name"})
            elif key == "contacts":
                check_fields(entry, where, *_CONTACT, path)
                call(where, b.add_contact, entry["name"],
                     **{k: v for k, v in entry.items() if k != "name"})
            elif key == "markers":
                check_fields(entry, where, {"name", "point"}, set(), path)
                call(where, b.add_marker, entry["name"], entry["point"])
            elif key in ("forces", "gears", "stops"):
                types = {"forces": {**_FORCES, "joint_friction": FRICTION_TYPE},
                         "gears": SPATIAL_FILE_TYPES,
                         "stops": STOP_TYPES}[key]
                kind = entry.get("type") if isinstance(entry, dict) else None
                if not isinstance(kind, str) or kind not in types:
                    raise ModelFileError(f"field 'type' must be one of "
                                         f"{', '.join(sorted(types))}, got {kind!r}", path,
                                         where)
                method, required, optional = types[kind]
                check_fields(entry, where, {"type", "name"} | required, optional, path)
                call(where, getattr(b, method), entry["name"],
                     **{k: v for k, v in entry.items() if k not in ("type", "name")})
            else:
                table = _JOINTS if key == "joints" else _DRIVERS
                kind = entry.get("type") if isinstance(entry, dict) else None
                if not isinstance(kind, str) or kind not in table:
                    raise ModelFileError(f"field 'type' must be one of "
                                         f"{', '.join(sorted(table))}, got {kind!r}", path,
                                         where)
                fields, method = table[kind]
                base = {"type", "name"} | ({"first", "second"} if key == "joints" else {"law"})
                # a spherical joint may have a clearance (linkdyn.elements.clearance)
                optional = {"clearance"} if kind == "spherical" and key == "joints" else set()
                check_fields(entry, where, base | fields, optional, path)
                call(where, getattr(b, method), entry["name"],
                     **{k: v for k, v in entry.items() if k not in ("type", "name")})
    return call("model", b.description)


def dumps(desc: SpatialDescription) -> str:
    return json.dumps(_no_negative_zero(to_dict(desc)), indent=2) + "\n"


def save(desc: SpatialDescription, path) -> None:
    """Write a spatial description as a model file (canonical form)."""
    Path(checked_path("save", path)).write_text(dumps(desc), encoding="utf-8")
