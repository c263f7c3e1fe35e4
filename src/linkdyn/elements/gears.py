"""Gears: spur gear pairs (external and internal) and racks with their pinions in planar
models, and gear pairs between two revolute joints in spatial models (bevel, worm, crossed
helical), with joint couplings of any ratio where a slide takes part (a spatial rack and
pinion, a screw, a mimic of prismatic joints). This module is the family's one home: its records, the checks of their fields, their
model-file form, what each pair's constraint row is (compiled by the coordinate family into
the angle rows of :mod:`linkdyn.compile.angles`, ``csrc/ld_angles.c``) and the tooth forces
read back from the row's multiplier.

Conventions
-----------
* A gear is a body (or the ground: a fixed sun or ring gear) with ``z`` teeth of module
  ``m``: its pitch radius is ``r = m z / 2``. Its ``centre`` is a point of it,
  ``"body.point"``; the pair turns about the centres, which its **carrier** (the ground, or a
  planet carrier) holds at their distance. Angles are measured from the carrier.
* An external pair turns its gears in opposite senses, ``r1 dtheta1 = -r2 dtheta2``; in an
  internal pair the second gear is a ring with internal teeth and both turn the same way,
  ``r1 dtheta1 = r2 dtheta2``. The centres must lie ``m (z1 + z2) / 2`` apart (external) or
  ``m (z2 - z1) / 2`` (internal) in the initial guesses.
* A rack is the second body of a prismatic joint whose line is the rack's pitch line; the
  joint's first body is the carrier. The pinion's centre must lie its pitch radius from
  that line. A pinion turning by ``dtheta`` moves the rack by ``r dtheta`` along the line,
  in the sense that the pinion's pitch point moves.
* The row of a pair is the arc by which its pitch circles disagree,

      Phi = (m / 2) wrap(z1 theta1 +- z2 theta2 - c),   a rack's (m / 2) wrap(z theta -+ 2 s / m - c)

  with ``c`` its value in the initial guesses: the gears mesh as they are drawn. The teeth
  counts are integers, so the sum is defined modulo 2 pi on any turn of either gear and the
  row needs no count of turns (``wrap`` brings it to (-pi, pi]).
* In a spatial model a pair couples two revolute joints' angles (each as its angle driver
  measures it: the joint's first body turning relative to its second, right-handed about
  the joint's axis, zero at the start): ``(m / 2) wrap(z1 theta1 -+ z2 theta2 - c)``, the
  sign set by ``sense`` ("opposite": ``z1 dtheta1 = -z2 dtheta2``). The geometry (cone
  angles, a worm's lead) is the bodies' and joints' own; the pair fixes the ratio, and the
  module only the scale of the tooth force.
* A spatial **joint coupling** (``add_joint_coupling``) holds ``q1 = k q2 + c`` between a
  prismatic joint's slide and another slide or a revolute joint's angle (a rack and pinion
  of pitch radius r: k = r; a screw of lead p: k = p / (2 pi)), with ``c`` its value in the
  initial guesses plus ``offset``. Its row is ``wrap(q1 - k q2 - c)`` where q1 is the
  angle, ``k wrap(q1 / k - q2 - c / k)`` where q2 is, else ``q1 - k q2 - c``: the angle's
  coefficient is 1, so the row needs no count of turns for any real k (two angles at a
  ratio of whole numbers are a gear pair). Its multiplier ``lam`` is the coupling's
  generalised force: ``-lam`` on the first joint (a force along its axis, or a torque) and
  ``k lam`` on the second.
* Its multiplier is the tangential tooth force ``F_t`` at the pitch point: the mesh puts the
  torque ``-r1 F_t`` on the first gear (about its centre, relative to the carrier) and
  ``-r2 F_t`` (external) or ``+r2 F_t`` (internal) on the second; a rack gets the force
  ``F_t`` along the motion of the pinion's pitch point. With the pressure angle ``alpha`` the
  tooth's radial and normal components are ``|F_t| tan alpha`` (pushing the gears apart)
  and ``|F_t| / cos alpha``. The row applies the mesh as couples: the motion and the tooth
  force are exact, and the pivots' reported reactions leave out the tooth force, which the
  gears' bearings carry in addition (:func:`tooth_forces` gives its vector).
* **Backlash** (a planar pair on the ground: ``backlash=b``, with ``contact={"stiffness",
  ...}``): the teeth have ``b`` m of play along the pitch circles. The pair then has no
  row; its mesh arc ``s = (m / 2) wrap(z1 theta1 +- z2 theta2 - c)`` (zero in the initial
  guesses: the teeth centred in their play) is free within ``|s| <= b / 2``, and beyond
  either end a compliant one-sided contact on s, ``"<pair>/lower"`` and ``"<pair>/upper"``
  (the laws of :mod:`linkdyn.elements.contacts`, K in N/m^n along the arc), pushes it
  back: the gears rattle through their play, strike and rebound, each onset and
  separation an event under the contact's name. The tangential tooth force is the two
  contacts' net force, in the exact pair's convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._checks import real
from ..errors import ModelError
from .bodies import GROUND, PointRef, _element
from .contacts import MODELS, contact_mapping
from .joints import PrismaticSpec
from .records import MESH, _Record

__all__ = ["GearPairSpec", "RackPinionSpec", "JointGearPairSpec", "JointCouplingSpec",
           "GearBuilder",
           "SpatialGearBuilder", "FILE_TYPES", "SPATIAL_FILE_TYPES", "to_dict", "mesh_terms",
           "tooth_forces", "pitch_circles", "DISTANCE_TOLERANCE", "planar_records",
           "BACKLASH_SIDES"]

#: The relative mismatch of a pair's centre distance (or a pinion's distance from its rack's
#: pitch line) in the initial guesses that the builder accepts.
DISTANCE_TOLERANCE = 1e-6
#: The contacts of a pair with backlash, in record order: s held above -b/2, below +b/2.
BACKLASH_SIDES = ("lower", "upper")


@dataclass(frozen=True)
class GearPairSpec:
    """A spur gear pair: ``first`` and ``second`` are the gears' centres (body, point)."""

    name: str
    first: PointRef
    second: PointRef
    teeth: tuple[int, int]
    module: float
    internal: bool = False
    carrier: str = GROUND
    pressure_angle: float = math.radians(20.0)
    #: m: the play along the pitch circles (0: the exact pair)
    backlash: float = 0.0
    #: with backlash, the teeth's contact law (model, K, n, damping, restitution)
    contact: tuple | None = None

    def radii(self) -> tuple[float, float]:
        return (0.5 * self.module * self.teeth[0], 0.5 * self.module * self.teeth[1])


@dataclass(frozen=True)
class JointCouplingSpec:
    """A spatial joint coupling ``q1 = ratio q2 + c`` (see the module notes): ``first`` and
    ``second`` are joint names, at least one of them prismatic; ``first_angle`` and
    ``second_angle`` say which is a revolute joint's angle; ``offset`` holds the first that
    far ahead of where the initial guesses put it."""

    name: str
    first: str
    second: str
    ratio: float
    offset: float = 0.0
    first_angle: bool = False
    second_angle: bool = False


@dataclass(frozen=True)
class RackPinionSpec:
    """A rack and pinion: ``pinion`` is the pinion's centre, ``rack`` a prismatic joint;
    ``sense`` (+1 or -1) is the rack's slide per pinion turn over ``r``, fixed by the
    geometry of the initial guesses."""

    name: str
    pinion: PointRef
    rack: str
    teeth: int
    module: float
    sense: float
    pressure_angle: float = math.radians(20.0)

    def radius(self) -> float:
        return 0.5 * self.module * self.teeth


@dataclass(frozen=True)
class JointGearPairSpec:
    """A gear pair of a spatial model, between two revolute joints (bevel, worm, crossed
    helical or parallel spur gears): ``first`` and ``second`` are the joints' names;
    ``sense`` is -1 where the joint angles turn in opposite senses (``z1 dtheta1 = -z2
    dtheta2``), +1 where in the same."""

    name: str
    first: str
    second: str
    teeth: tuple[int, int]
    module: float
    sense: float = -1.0
    pressure_angle: float = math.radians(20.0)
    #: rad: the first joint is held this far ahead of where the initial guesses put it
    #: relative to the second (a URDF ``<mimic>``'s offset, where the start breaks it)
    phase: float = 0.0

    def radii(self) -> tuple[float, float]:
        return (0.5 * self.module * self.teeth[0], 0.5 * self.module * self.teeth[1])


def _teeth(entry, what, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelError(f"{entry}: {what} must be a positive whole number of teeth, got "
                         f"{value!r}")
    return int(value)


def _teeth_pair(entry, teeth) -> tuple[int, int]:
    if not isinstance(teeth, (tuple, list)) or len(teeth) != 2:
        raise ModelError(f"{entry}: teeth must be a pair (z1, z2), got {teeth!r}")
    return (_teeth(entry, "teeth[0]", teeth[0]), _teeth(entry, "teeth[1]", teeth[1]))


def _angle(entry, value) -> float:
    alpha = real(entry, "pressure_angle", value)
    if not 0.0 <= alpha < 0.5 * math.pi:
        raise ModelError(f"{entry}: pressure_angle must be in [0, pi/2) rad, got {alpha!r}")
    return alpha


def _backlash(entry, backlash, contact, carrier, module) -> tuple:
    """The checked backlash and contact law of a pair: (0.0, None) for the exact pair."""
    if backlash is None:
        if contact is not None:
            raise ModelError(f"{entry}: contact is the law of a pair with backlash; give "
                             "backlash too (m, the play along the pitch circles)")
        return 0.0, None
    play = real(entry, "backlash", backlash, positive=True)
    if play >= 0.5 * math.pi * module:
        raise ModelError(f"{entry}: backlash = {play!r} m must be below half the circular "
                         f"pitch, pi m / 2 = {0.5 * math.pi * module:.6g} m")
    if carrier != GROUND:
        raise ModelError(f"{entry}: backlash needs the gears' centres on the ground (carrier "
                         f"'ground'), got carrier {carrier!r}")
    if not isinstance(contact, dict) or "stiffness" not in contact:
        raise ModelError(f"{entry}: backlash needs contact={{'stiffness': K, ...}} (the "
                         f"teeth's contact law, N/m^n along the arc), got {contact!r}")
    return play, contact_mapping(entry, contact)


class GearBuilder:
    """The gear methods of :class:`linkdyn.ModelBuilder` (a mixin: it uses the builder's
    tables and reference checks)."""

    def _gear_point_guess(self, ref) -> np.ndarray:
        """A point's global position in the initial guesses."""
        body, point = ref
        if body == GROUND:
            return np.array(self._ground[point], dtype=float)
        spec = self._bodies[body]
        u = np.array(spec.u, dtype=float)
        u /= math.hypot(*u)
        xi, eta = spec.local_points()[point]
        return np.array(spec.position) + xi * u + eta * np.array([-u[1], u[0]])

    def _gear_carrier(self, entry, carrier, gears) -> str:
        if not isinstance(carrier, str) or (carrier != GROUND and carrier not in self._bodies):
            raise ModelError(f"{entry}: carrier must be 'ground' or a body's name, got "
                             f"{carrier!r}")
        for body in gears:
            if body == carrier:
                raise ModelError(f"{entry}: gear body '{body}' is its own carrier (the "
                                 "carrier holds the gears' centres while they turn)")
        return carrier

    def add_gear_pair(self, name: str, first, second, *, teeth, module, internal=False,
                      carrier=GROUND, pressure_angle=math.radians(20.0), backlash=None,
                      contact=None) -> None:
        """A spur gear pair meshing the gear centred at point ``first`` with the one at
        ``second`` (``"body.point"``; the ground for a fixed gear), with ``teeth = (z1,
        z2)`` of ``module`` m (m): pitch radii ``m z / 2``. ``internal=True`` makes the second
        gear a ring with internal teeth. ``carrier`` is the body holding both centres
        (default the ground); ``pressure_angle`` (rad, default 20 degrees) sets the tooth
        force's components. ``backlash`` (m, along the pitch circles) gives the teeth that
        much play, with the contact law ``contact={"stiffness", "exponent", "model",
        "damping" | "restitution"}`` where they meet (a pair on the ground). See
        :mod:`linkdyn.elements.gears`."""
        name = self._new_name("gear pair", name)
        entry = f"gear pair '{name}'"
        with _element(name):
            a, b = self._ref(entry, first), self._ref(entry, second)
            if a[0] == b[0]:
                raise ModelError(f"{entry}: the two gears must be different bodies; both "
                                 f"are '{a[0]}'")
            z = _teeth_pair(entry, teeth)
            m = real(entry, "module", module, positive=True)
            internal = self._flag(entry, "internal", internal)
            if internal and z[1] <= z[0]:
                raise ModelError(f"{entry}: an internal pair's ring (the second gear) needs "
                                 f"more teeth than its pinion, got teeth {z}")
            carrier = self._gear_carrier(entry, carrier, (a[0], b[0]))
            alpha = _angle(entry, pressure_angle)
            want = 0.5 * m * (z[1] - z[0] if internal else z[0] + z[1])
            got = float(np.linalg.norm(self._gear_point_guess(b) - self._gear_point_guess(a)))
            if abs(got - want) > DISTANCE_TOLERANCE * want:
                raise ModelError(
                    f"{entry}: its centres '{'.'.join(a)}' and '{'.'.join(b)}' are {got:.9g} m "
                    f"apart in the initial guesses; teeth {z} of module {m:g} m need "
                    f"{want:.9g} m ({'m (z2 - z1) / 2' if internal else 'm (z1 + z2) / 2'})")
            play, law = _backlash(entry, backlash, contact, carrier, m)
        self._gears[name] = GearPairSpec(name, a, b, z, m, internal, carrier, alpha, play,
                                         law)

    def add_rack_and_pinion(self, name: str, pinion, rack: str, *, teeth, module,
                            pressure_angle=math.radians(20.0)) -> None:
        """A rack and pinion: the pinion centred at point ``pinion`` (``"body.point"``) with
        ``teeth`` of ``module`` m (m) drives the rack, the second body of prismatic joint
        ``rack``, whose line is the rack's pitch line and whose first body holds the pinion's
        centre. See :mod:`linkdyn.elements.gears`."""
        name = self._new_name("gear pair", name)
        entry = f"rack and pinion '{name}'"
        with _element(name):
            c = self._ref(entry, pinion)
            if not isinstance(rack, str) or not isinstance(self._joints.get(rack),
                                                             PrismaticSpec):
                raise ModelError(f"{entry}: rack must name a prismatic joint (prismatic "
                                 "joints: " + (", ".join(k for k, j in self._joints.items()
                                                          if isinstance(j, PrismaticSpec))
                                               or "none") + f"), got {rack!r}")
            joint = self._joints[rack]
            if c[0] in (joint.first[0], joint.second[0]):
                raise ModelError(f"{entry}: the pinion's body '{c[0]}' must be neither the "
                                 f"rack nor its carrier (the bodies of joint '{rack}')")
            z = _teeth(entry, "teeth", teeth)
            m = real(entry, "module", module, positive=True)
            alpha = _angle(entry, pressure_angle)
            sense = self._rack_sense(entry, c, joint, 0.5 * m * z)
        self._gears[name] = RackPinionSpec(name, c, rack, z, m, sense, alpha)

    def _rack_sense(self, entry, centre, joint, radius) -> float:
        """+1 or -1: the slide of the rack per pinion turn over r, from where the pitch line
        lies; a ModelError where it is not tangent to the pitch circle."""
        origin = self._gear_point_guess(joint.first)
        base = math.atan2(*self._bodies[joint.first[0]].u[::-1]) \
            if joint.first[0] != GROUND else 0.0
        axis = np.array([math.cos(base + joint.axis), math.sin(base + joint.axis)])
        offset = origin - self._gear_point_guess(centre)
        d = offset - axis * (offset @ axis)   # centre -> its foot on the pitch line
        got = float(np.linalg.norm(d))
        if abs(got - radius) > DISTANCE_TOLERANCE * radius:
            raise ModelError(f"{entry}: the pinion's centre lies {got:.9g} m from the rack's "
                             f"pitch line (the line of joint '{joint.name}') in the initial "
                             f"guesses; its pitch radius is {radius:.9g} m")
        # the pitch point's velocity per unit turn: k x d, along the axis
        return 1.0 if (-d[1] * axis[0] + d[0] * axis[1]) > 0.0 else -1.0


class SpatialGearBuilder:
    """The gear methods of :class:`linkdyn.SpatialModelBuilder` (a mixin)."""

    def add_joint_coupling(self, name: str, first: str, second: str, *, ratio,
                           offset=0.0) -> None:
        """A coupling holding joint ``first``'s position at ``ratio`` times joint
        ``second``'s (each a prismatic joint's slide in m, or a revolute joint's angle in
        rad, as drivers measure them), at least one of them prismatic: a rack and pinion
        (ratio = the pinion's pitch radius), a screw (lead / 2 pi), a mimic of slides.
        ``offset`` (m or rad of the first) holds the first that far ahead of where the
        initial guesses put it. Two revolute joints are a gear pair
        (:meth:`add_gear_pair`). See :mod:`linkdyn.elements.gears`."""
        name = self._new_name("joint coupling", name)
        entry = f"joint coupling '{name}'"
        with _element(name):
            kinds = []
            for joint in (first, second):
                kind = getattr(self._joints.get(joint) if isinstance(joint, str) else None,
                               "kind", None)
                if kind not in ("revolute", "prismatic"):
                    known = [j for j, v in self._joints.items()
                             if getattr(v, "kind", None) in ("revolute", "prismatic")]
                    raise ModelError(f"{entry}: {joint!r} is not a revolute or prismatic joint "
                                     f"of this model (those joints: "
                                     f"{', '.join(known) or 'none'})")
                kinds.append(kind)
            if first == second:
                raise ModelError(f"{entry}: the coupling joins two different joints; both are "
                                 f"{first!r}")
            if kinds == ["revolute", "revolute"]:
                raise ModelError(f"{entry}: {first!r} and {second!r} are both revolute: couple "
                                 "two angles by a gear pair (add_gear_pair), whose teeth give "
                                 "the ratio")
            k = real(entry, "ratio", ratio)
            if k == 0.0:
                raise ModelError(f"{entry}: ratio must not be zero (that is a driver of the "
                                 "first joint, not a coupling)")
            offset = real(entry, "offset", offset)
        self._gears[name] = JointCouplingSpec(name, first, second, k, offset,
                                              kinds[0] == "revolute", kinds[1] == "revolute")

    def add_gear_pair(self, name: str, first: str, second: str, *, teeth, module,
                      sense="opposite", pressure_angle=math.radians(20.0),
                      phase=0.0) -> None:
        """A gear pair coupling revolute joints ``first`` and ``second``: their angles (each
        its first body's turn relative to its second about the joint's axis, as for angle
        drivers) keep ``z1 theta1 = -z2 theta2`` (``sense="opposite"``) or ``z1 theta1 =
        z2 theta2`` (``"same"``), with ``teeth = (z1, z2)`` (a worm's starts and its
        wheel's teeth) of ``module`` m (m), which sets the tooth force's scale. A bevel pair
        whose two axes both point away from (or both towards) the cones' apex turns in
        opposite senses. ``phase`` (rad) holds the first joint that far ahead of where the
        initial guesses put it against the second (default 0: the pair meshes as the
        bodies are placed). See :mod:`linkdyn.elements.gears`."""
        name = self._new_name("gear pair", name)
        entry = f"gear pair '{name}'"
        with _element(name):
            for joint in (first, second):
                if getattr(self._joints.get(joint) if isinstance(joint, str) else None,
                           "kind", None) != "revolute":
                    known = [j for j, v in self._joints.items()
                             if getattr(v, "kind", None) == "revolute"]
                    raise ModelError(f"{entry}: {joint!r} is not a revolute joint of this "
                                     f"model (revolute joints: {', '.join(known) or 'none'})")
            if first == second:
                raise ModelError(f"{entry}: the pair couples two different joints; both are "
                                 f"{first!r}")
            z = _teeth_pair(entry, teeth)
            m = real(entry, "module", module, positive=True)
            if sense not in ("opposite", "same"):
                raise ModelError(f"{entry}: sense must be 'opposite' or 'same', got "
                                 f"{sense!r}")
            alpha = _angle(entry, pressure_angle)
            phase = real(entry, "phase", phase)
        self._gears[name] = JointGearPairSpec(name, first, second, z, m,
                                              -1.0 if sense == "opposite" else 1.0, alpha,
                                              phase)


#: Model-file entry types: method, required fields, optional fields (besides type, name).
FILE_TYPES = {
    "gear_pair": ("add_gear_pair", {"first", "second", "teeth", "module"},
                  {"internal", "carrier", "pressure_angle", "backlash", "contact"}),
    "rack_and_pinion": ("add_rack_and_pinion", {"pinion", "rack", "teeth", "module"},
                        {"pressure_angle"}),
}


#: The same for spatial models.
SPATIAL_FILE_TYPES = {
    "gear_pair": ("add_gear_pair", {"first", "second", "teeth", "module"},
                  {"sense", "pressure_angle", "phase"}),
    "joint_coupling": ("add_joint_coupling", {"first", "second", "ratio"}, {"offset"}),
}


def to_dict(spec) -> dict:
    """The model-file form of a gear pair, rack or joint coupling."""
    if isinstance(spec, JointCouplingSpec):
        return {"type": "joint_coupling", "name": spec.name, "first": spec.first,
                "second": spec.second, "ratio": spec.ratio,
                **({"offset": spec.offset} if spec.offset else {})}
    if isinstance(spec, JointGearPairSpec):
        return {"type": "gear_pair", "name": spec.name, "first": spec.first,
                "second": spec.second, "teeth": list(spec.teeth), "module": spec.module,
                "sense": "opposite" if spec.sense < 0 else "same",
                "pressure_angle": spec.pressure_angle,
                **({"phase": spec.phase} if spec.phase else {})}
    if isinstance(spec, RackPinionSpec):
        return {"type": "rack_and_pinion", "name": spec.name, "pinion": ".".join(spec.pinion),
                "rack": spec.rack, "teeth": spec.teeth, "module": spec.module,
                "pressure_angle": spec.pressure_angle}
    d = {"type": "gear_pair", "name": spec.name, "first": ".".join(spec.first),
         "second": ".".join(spec.second), "teeth": list(spec.teeth), "module": spec.module,
         "pressure_angle": spec.pressure_angle}
    if spec.internal:
        d["internal"] = True
    if spec.carrier != GROUND:
        d["carrier"] = spec.carrier
    if spec.backlash:
        model, k, n, c, e = spec.contact
        d["backlash"] = spec.backlash
        d["contact"] = {"model": model, "stiffness": k, "exponent": n,
                        **({"damping": c} if model == "hertz" else {"restitution": e})}
    return d


def mesh_terms(spec, joints) -> tuple:
    """What the pair's row is, for the coordinate family to place in q: (scale, terms,
    shift: what the row's sum is, beyond its value in the initial guesses, where it holds),
    each term ("turn", body, carrier, n) for n times the body's angle from the carrier's,
    ("slide", prismatic joint, n) for n times the joint's slide, or ("joint", revolute
    joint, n) for n times a spatial joint's angle, ("spatial_slide", prismatic joint, n) for
    n times a spatial joint's slide."""
    if isinstance(spec, JointCouplingSpec):
        kinds = ("joint" if spec.first_angle else "spatial_slide",
                 "joint" if spec.second_angle else "spatial_slide")
        if spec.second_angle:        # the angle's coefficient 1: k wrap(q1 / k - q2 - c / k)
            k = spec.ratio
            return k, ((kinds[0], spec.first, 1.0 / k), (kinds[1], spec.second, -1.0)), \
                spec.offset / k
        return 1.0, ((kinds[0], spec.first, 1.0), (kinds[1], spec.second, -spec.ratio)), \
            spec.offset
    if isinstance(spec, JointGearPairSpec):
        z1, z2 = spec.teeth
        return 0.5 * spec.module, (("joint", spec.first, z1),
                                   ("joint", spec.second, -spec.sense * z2)), z1 * spec.phase
    if isinstance(spec, RackPinionSpec):
        joint = joints[spec.rack]
        return 0.5 * spec.module, (("turn", spec.pinion[0], joint.first[0], spec.teeth),
                                   ("slide", spec.rack, -2.0 * spec.sense / spec.module)), 0.0
    z1, z2 = spec.teeth
    return 0.5 * spec.module, (("turn", spec.first[0], spec.carrier, z1),
                               ("turn", spec.second[0], spec.carrier, -z2 if spec.internal
                                else z2)), 0.0


def tooth_forces(spec, lam) -> dict:
    """The mesh's forces from its row's multiplier(s) ``lam`` (N): ``tangential`` F_t, its
    ``radial`` and ``normal`` components, and the torques on the gears (``torque1``,
    ``torque2``; a rack: ``torque1`` on the pinion and ``rack_force`` along its joint's
    axis, positive where the slide grows)."""
    lam = np.asarray(lam, dtype=float)
    if isinstance(spec, JointCouplingSpec):
        return dict(first=-lam, second=spec.ratio * lam)
    out = dict(tangential=lam, radial=np.abs(lam) * math.tan(spec.pressure_angle),
               normal=np.abs(lam) / math.cos(spec.pressure_angle))
    if isinstance(spec, RackPinionSpec):
        out.update(torque1=-spec.radius() * lam, rack_force=spec.sense * lam)
    elif isinstance(spec, JointGearPairSpec):
        r1, r2 = spec.radii()
        out.update(torque1=-r1 * lam, torque2=spec.sense * r2 * lam)
    else:
        r1, r2 = spec.radii()
        out.update(torque1=-r1 * lam, torque2=(r2 if spec.internal else -r2) * lam)
    return out


def pitch_circles(spec) -> list:
    """(centre point, pitch radius) of each gear of a pair (a rack: the pinion's)."""
    if isinstance(spec, RackPinionSpec):
        return [(spec.pinion, spec.radius())]
    r1, r2 = spec.radii()
    return [(spec.first, r1), (spec.second, r2)]


def planar_records(desc, body_index) -> list:
    """The contact records of a planar description's pairs with backlash: two MESH records
    each (``csrc/ld_forces.h``), ``"<pair>/lower"`` holding the mesh arc above -b/2 and
    ``"<pair>/upper"`` below +b/2, the arc zero where the initial guesses put the gears."""
    out = []
    bodies = {b.name: b for b in desc.bodies}
    for spec in getattr(desc, "gears", ()):
        if not isinstance(spec, GearPairSpec) or not spec.backlash:
            continue
        n1, n2 = spec.teeth[0], (-spec.teeth[1] if spec.internal else spec.teeth[1])
        idx, c = [], 0.0
        for (body, _), n in ((spec.first, n1), (spec.second, n2)):
            if body == GROUND:
                idx.append(-1)
                continue
            idx.append(body_index[body])
            ux, uy = bodies[body].u
            c += math.remainder(n * math.atan2(uy, ux), 2.0 * math.pi)
        model, k, n, damping, e = spec.contact
        for side, sense in zip(BACKLASH_SIDES, (1.0, -1.0)):
            rec = _Record(f"{spec.name}/{side}", MESH, (idx[0], idx[1]),
                          (float(n1), float(n2), c, 0.5 * spec.module, 0.0, 0.0))
            rec.law = MODELS[model]
            rec.law_par = (k, n, damping if model == "hertz" else e, -sense * spec.backlash / 2)
            rec.sense = sense
            out.append(rec)
    return out
