"""Contacts: compliant normal contact between a circle (or a point) on a body and a line on
the ground or on another body.

The family's records, builder method (:class:`ContactBuilder`, mixed into
:class:`linkdyn.ModelBuilder`), model-file entries and compile step live here; the contact
force laws are evaluated by the force kernels (``csrc/ld_forces.c``), and onset and
separation are events located by the integrator.

Geometry. The line passes through ``line_point`` (a ground point, or a point of a body) with
the direction at ``line_angle`` rad from that body's u (for the ground: from the global x
axis); its normal n is that direction turned by +90 degrees: the contact keeps the circle on
the side n points to. The circle of ``radius`` r (0: a point) is centred at ``point``. The
penetration is

    delta = r - n . (centre - line point),

a quadratic form in linkdyn's coordinates (linear when the line is on the ground), so its
derivatives are exact.

Normal force, for delta > 0 (zero otherwise), pushing the circle out along n and the line's
body the other way, never pulling (clamped at zero):

    model="hertz"                 F = K delta^n (1 + c delta')        (Hunt and Crossley)
    model="lankarani_nikravesh"   F = K delta^n (1 + 3 (1 - e^2) delta' / (4 v0))

with K the contact stiffness (N/m^n), n the exponent (1.5 for Hertz's sphere or cylinder
end), c a damping coefficient (s/m) and e the coefficient of restitution, v0 the normal
approach speed at the onset of the contact (recorded at the onset event of each run; a
contact that starts closed has no damping until it reopens and closes). The stored energy
is K delta^(n+1) / (n + 1); ``result.element_work(name)`` is the energy the damping took.

Every onset (penetration starting, direction +1) and separation (-1) is an event located by
the integrator and reported in ``result.events`` under the contact's name.

Friction (``friction=mu``, ``static_friction=mu0 >= mu``): Coulomb friction at the contact
point, handled by :mod:`linkdyn.friction` (sliding force -mu F_N sign(v_T); sticking held
by a constraint whose multiplier is the friction force; transitions located as events and
decided by a linear complementarity problem). The slip velocity v_T is the rate of the
rolling coordinate

    s_T = t . (centre - line point) + r (angle of the circle's body - angle of the line's),

t the line's direction: the velocity of the circle's material point at the contact relative
to the line's, along t.

Swinging feet (``swing_partner="other contact"``, both contacts on one ground line): Zheng
and Wang's rule that a walker's swing leg is not subject to contact forces, so that it does not
scuff the floor as it swings through. When this contact's circle is clear of the line,
behind the partner's circle (along t) and the partner penetrates (the partner's foot
carries) while moving forward relative to it, the contact becomes *swinging* and applies
no force; it returns once its circle is ahead of the partner's and clear of the line (so
its next touchdown is a heel strike), or as soon as it stops moving forward relative to the
partner's (the rule holds only while the leg swings forward; a walker running out of speed
puts its swing foot down again). Passing the partner (``"<contact>/pass"``) and stopping
relative to it (``"<contact>/back"``) are events; the swinging intervals are kept in
``result.friction_modes`` as modes "swing" and "clear". The rule is the paper's modelling
device, with its consequence: a walker that falls while a foot swings forward falls through
the floor with that foot.

Arcs (``arc=(a_min, a_max)``, rad, for a circle whose line is on the ground; less than a
half circle): the circle carries only where the direction from its centre to the contact
point, -n, lies between a_min and a_max measured from its body's u (a walker's round foot
is such an arc). The two ends are events (``"<contact>/arc_min"``, ``"<contact>/arc_max"``);
while -n is outside the arc the contact applies no force (the arc's edge is not modelled),
kept in ``result.friction_modes`` as modes "off arc" / "on arc".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._checks import real as _number
from ..errors import ModelError
from .bodies import GROUND, _element
from .records import FRICTION_LAW, ROLL, SLIDE, _Record

__all__ = ["ContactSpec", "ContactBuilder", "FILE_FIELDS", "to_dict", "contact_records",
           "contact_law", "contact_mapping", "CONTACT_FIELDS", "HERTZ", "LANKARANI",
           "FRICTION", "STICK_VELOCITY"]

PointRef = tuple[str, str]

# Force laws of csrc/ld_forces.h.
HERTZ, LANKARANI, FRICTION = 1, 2, FRICTION_LAW   # LD_FORCE_*
MODELS = {"hertz": HERTZ, "lankarani_nikravesh": LANKARANI}
#: Default slip speed (m/s) below which a contact at a transition counts as at rest (the
#: stick threshold of Zheng and Wang's walker).
STICK_VELOCITY = 1e-5
#: The slowest stick threshold a contact takes (m/s): below it, rest is inside the noise of
#: the velocities (a walker with 1e-300 did not finish 0.02 s in 20 s).
MIN_STICK_VELOCITY = 1e-10


@dataclass(frozen=True)
class ContactSpec:
    """A compliant contact between a circle (radius 0: a point) and a line (module notes)."""

    name: str
    point: PointRef
    radius: float
    line_point: PointRef
    line_angle: float
    model: str
    stiffness: float
    exponent: float
    damping: float = 0.0
    restitution: float = 1.0
    friction: float | None = None          # kinetic coefficient mu (None: frictionless)
    static_friction: float | None = None   # mu0 >= mu
    stick_velocity: float = STICK_VELOCITY
    swing_partner: str | None = None
    arc: tuple | None = None               # (a_min, a_max) rad in the circle's body frame


def contact_law(entry, model, stiffness, exponent, damping, restitution) -> tuple:
    """The checked normal-force law of a contact: (K, n, c, e), c the Hertz model's damping
    (0 for Lankarani-Nikravesh) and e the restitution (1 for Hertz); ModelError naming
    ``entry`` otherwise."""
    if not isinstance(model, str) or model not in MODELS:
        raise ModelError(f"{entry}: model must be one of {', '.join(MODELS)}, got {model!r}")
    k = _number(entry, "stiffness", stiffness, positive=True)
    n = _number(entry, "exponent", exponent, positive=True)
    if n < 1.0:
        raise ModelError(f"{entry}: exponent must be at least 1 (the force must have a "
                         f"continuous derivative at onset), got {n!r}")
    c = _number(entry, "damping", damping, nonnegative=True)
    if model == "hertz":
        if restitution is not None:
            raise ModelError(f"{entry}: restitution belongs to model 'lankarani_nikravesh'; "
                             "the Hertz model takes damping")
        return k, n, c, 1.0
    if restitution is None:
        raise ModelError(f"{entry}: model 'lankarani_nikravesh' needs restitution "
                         "(0 < e <= 1)")
    if c != 0.0:
        raise ModelError(f"{entry}: model 'lankarani_nikravesh' takes restitution, not "
                         "damping")
    e = _number(entry, "restitution", restitution, positive=True)
    if e > 1.0:
        raise ModelError(f"{entry}: restitution must be at most 1, got {e!r}")
    return k, n, c, e


#: The fields of an element's ``contact`` mapping (a cam's, a gear pair's backlash):
#: required, optional.
CONTACT_FIELDS = ({"stiffness"}, {"exponent", "model", "damping", "restitution"})


def contact_mapping(entry, contact) -> tuple:
    """The checked ``contact`` mapping of an element: (model, K, n, damping,
    restitution), or ModelError naming ``entry`` and the bad field."""
    if not isinstance(contact, dict):
        raise ModelError(f"{entry}: contact must be a mapping with stiffness (and exponent, "
                         f"model, damping or restitution), got {contact!r}")
    required, optional = CONTACT_FIELDS
    unknown = sorted(set(contact) - required - optional)
    if unknown:
        raise ModelError(f"{entry}: contact has no field {unknown[0]!r} (fields: "
                         f"{', '.join(sorted(required | optional))})")
    if "stiffness" not in contact:
        raise ModelError(f"{entry}: contact needs 'stiffness'")
    model = contact.get("model", "hertz")
    k, n, c, e = contact_law(f"{entry} contact", model, contact["stiffness"],
                             contact.get("exponent", 1.5), contact.get("damping", 0.0),
                             contact.get("restitution"))
    return (model, k, n, c, e)


class ContactBuilder:
    """The contact method of :class:`linkdyn.ModelBuilder` (a mixin)."""

    def add_contact(self, name: str, point, line_point, line_angle=0.0, radius=0.0, *,
                    stiffness, exponent=1.5, model: str = "hertz", damping=0.0,
                    restitution=None, friction=None, static_friction=None,
                    stick_velocity=STICK_VELOCITY, swing_partner=None, arc=None) -> None:
        """A compliant contact of the circle of ``radius`` (m; 0 for a point) centred at
        body point ``point`` with the line through ``line_point`` at ``line_angle`` (rad):
        normal force ``K delta^n (1 + c delta')`` (``model="hertz"``, ``damping`` c in s/m)
        or Lankarani-Nikravesh with ``restitution`` e (``model="lankarani_nikravesh"``);
        ``stiffness`` K in N/m^n, ``exponent`` n >= 1. ``friction`` mu and
        ``static_friction`` mu0 >= mu (default mu) give Coulomb friction, with contacts
        slower than ``stick_velocity`` (m/s) at a transition counted as at rest (see
        :mod:`linkdyn.friction`). ``swing_partner`` names the contact of the other foot of a
        walker: this one ignores its circle while it swings (module notes). ``arc`` =
        (a_min, a_max) makes the circle an arc: the directions from its centre, in rad from
        the body's u, that carry it (module notes). See :mod:`linkdyn.contacts`."""
        name = self._new_name("contact", name)
        entry = f"contact '{name}'"
        with _element(name):
            p = self._ref(entry, point)
            lp = self._ref(entry, line_point)
            if p[0] == GROUND:
                raise ModelError(f"{entry}: the circle (point) must be on a body, not the "
                                 "ground")
            if p[0] == lp[0]:
                raise ModelError(f"{entry}: the circle and the line are on the same body "
                                 f"'{p[0]}'")
            k, n, c, e = contact_law(entry, model, stiffness, exponent, damping, restitution)
            r = _number(entry, "radius", radius, nonnegative=True)
            angle = _number(entry, "line_angle", line_angle)
            mu = mu0 = None
            if friction is None:
                if static_friction is not None:
                    raise ModelError(f"{entry}: static_friction needs friction (the kinetic "
                                     "coefficient mu)")
            else:
                mu = _number(entry, "friction", friction, nonnegative=True)
                mu0 = mu if static_friction is None else _number(
                    entry, "static_friction", static_friction, nonnegative=True)
                if mu0 < mu:
                    raise ModelError(f"{entry}: static_friction mu0 = {mu0!r} is below the "
                                     f"kinetic friction mu = {mu!r}; Coulomb friction needs "
                                     "mu0 >= mu")
            vs = _number(entry, "stick_velocity", stick_velocity, positive=True)
            if vs < MIN_STICK_VELOCITY:
                raise ModelError(f"{entry}: stick_velocity = {vs:g} m/s is below "
                                 f"{MIN_STICK_VELOCITY:g} m/s, inside the rounding and error "
                                 "noise of the velocities: rest would never be told from "
                                 "sliding, and the contact would chatter without end")
            if swing_partner is not None:
                if not isinstance(swing_partner, str) or swing_partner == name:
                    raise ModelError(f"{entry}: swing_partner must name another contact, got "
                                     f"{swing_partner!r}")
                if lp[0] != GROUND:
                    raise ModelError(f"{entry}: a swinging contact's line must be on the "
                                     "ground")
            if arc is not None:
                if r <= 0.0:
                    raise ModelError(f"{entry}: an arc needs a radius > 0")
                if lp[0] != GROUND:
                    raise ModelError(f"{entry}: an arc's line must be on the ground")
                if not isinstance(arc, (tuple, list)) or len(arc) != 2:
                    raise ModelError(f"{entry}: arc must be (a_min, a_max) in rad, got {arc!r}")
                arc = (_number(entry, "arc a_min", arc[0]), _number(entry, "arc a_max", arc[1]))
                if not 0.0 < arc[1] - arc[0] < math.pi:
                    raise ModelError(f"{entry}: arc (a_min, a_max) = {arc!r} must have "
                                     "0 < a_max - a_min < pi (less than a half circle)")
            self._contacts[name] = ContactSpec(name, p, r, lp, angle, model, k, n, c, e,
                                               mu, mu0, vs, swing_partner, arc)


#: Model-file entry fields: required, optional.
FILE_FIELDS = ({"name", "point", "line_point", "stiffness"},
               {"line_angle", "radius", "exponent", "model", "damping", "restitution",
                "friction", "static_friction", "stick_velocity", "swing_partner", "arc"})


def to_dict(spec: ContactSpec) -> dict:
    d = {"name": spec.name, "point": ".".join(spec.point), "radius": spec.radius,
         "line_point": ".".join(spec.line_point), "line_angle": spec.line_angle,
         "model": spec.model, "stiffness": spec.stiffness, "exponent": spec.exponent}
    if spec.model == "hertz":
        d["damping"] = spec.damping
    else:
        d["restitution"] = spec.restitution
    if spec.friction is not None:
        d.update(friction=spec.friction, static_friction=spec.static_friction,
                 stick_velocity=spec.stick_velocity)
    if spec.swing_partner is not None:
        d["swing_partner"] = spec.swing_partner
    if spec.arc is not None:
        d["arc"] = list(spec.arc)
    return d


def contact_records(desc, body_index, local_of, ground, first):
    """Per contact a record on the slide coordinate s = n . (centre - line point) with a
    contact law on the penetration r - s; for a contact with friction, next to it a friction
    record on the rolling coordinate. ``first`` is the index the first record will have.
    Returns (records, frictions, swings, arcs): frictions as (contact, friction record,
    normal record, mu, mu0, stick velocity); swings as (contact, normal record, partner,
    partner's normal record, body, local centre, partner's body, its local centre, line
    angle); arcs as (contact, normal record, body, a_min, a_max, line normal (nx, ny))."""
    recs, frictions, swings, arcs, normal_of, centre_of = [], [], [], [], {}, {}
    for c in desc.contacts:
        b1, p1 = ((-1, ground[c.line_point[1]]) if c.line_point[0] == GROUND else
                  (body_index[c.line_point[0]], local_of(body_index[c.line_point[0]],
                                                         c.line_point[1])))
        b2 = body_index[c.point[0]]
        p2 = local_of(b2, c.point[1])
        normal = c.line_angle + 0.5 * math.pi
        rec = _Record(c.name, SLIDE, (b1, b2), (*p1, *p2, math.cos(normal), math.sin(normal)))
        rec.law = MODELS[c.model]
        rec.law_par = (c.stiffness, c.exponent,
                       c.damping if c.model == "hertz" else c.restitution, c.radius)
        recs.append(rec)
        normal_of[c.name] = first + len(recs) - 1
        centre_of[c.name] = (b2, tuple(p2))
        if c.arc is not None:
            arcs.append((c.name, normal_of[c.name], b2, c.arc[0], c.arc[1],
                         (math.cos(normal), math.sin(normal))))
        if c.friction is not None:
            normal_index = first + len(recs) - 1
            fr = _Record(c.name, ROLL, (b1, b2), (*p1, *p2, math.cos(c.line_angle),
                                                  math.sin(c.line_angle)))
            fr.law = FRICTION
            fr.law_par = (c.friction, float(normal_index), c.radius, 0.0)
            frictions.append((c.name, first + len(recs), normal_index, c.friction,
                              c.static_friction, c.stick_velocity))
            recs.append(fr)
    specs = {c.name: c for c in desc.contacts}
    for c in desc.contacts:
        if c.swing_partner is None:
            continue
        entry = f"contact '{c.name}'"
        other = specs.get(c.swing_partner)
        if other is None:
            raise ModelError(f"{entry}: swing_partner {c.swing_partner!r} is not a contact "
                             f"(contacts: {', '.join(specs)})", c.name)
        if (other.line_point, other.line_angle) != (c.line_point, c.line_angle):
            raise ModelError(f"{entry}: its swing_partner '{other.name}' must touch the same "
                             "line (same line_point and line_angle)", c.name)
        swings.append((c.name, normal_of[c.name], other.name, normal_of[other.name],
                       *centre_of[c.name], *centre_of[other.name], c.line_angle))
    return recs, frictions, swings, arcs
