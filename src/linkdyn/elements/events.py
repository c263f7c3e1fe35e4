"""Events: conditions the integrator locates in time while it runs (compiled: no Python in
the step loop).

An event is a function g(t, q, v) whose change of sign the integrator finds on its dense
output, to ``event_tol`` seconds (``simulate``'s option; default ``1e-12 max(1, |t|)``):

    marker_crosses("foot", "y", 0.0, direction=-1)      g = y of marker foot - 0.0
    coordinate_crosses("motor", 2 * pi, direction=+1)   g = s of force element motor - 2 pi

``direction`` +1 counts only crossings from below (g rising), -1 only from above, 0 both.
A ``terminal`` event stops the simulation there (``result.status == "event"``); the others
are recorded in ``result.events`` and the integration restarts from the event state (order 1,
consistent accelerations), as it must after a discontinuity. Events are given per run
(``simulate(..., events=[...])``), not stored in the model.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from ..errors import ArgumentError, ArgumentTypeError, UnknownNameError, name_list

__all__ = ["Event", "EventRecord", "marker_crosses", "coordinate_crosses", "touchdown",
           "passes", "compile_events"]

MARKER, COORDINATE, CONTACT, FRICTION_STOP, FRICTION_SLIP, PASS, BACK, ARC = range(8)


@dataclass(frozen=True)
class Event:
    """A located condition; build it with :func:`marker_crosses` or
    :func:`coordinate_crosses`."""

    name: str
    kind: int
    target: str
    axis: str | None
    value: float
    direction: int
    terminal: bool
    #: True when the name was made from the target (no ``name=`` given): such names are
    #: made distinct in a run (see :func:`marker_crosses`).
    automatic: bool = field(default=False, compare=False)


@dataclass(frozen=True)
class EventRecord:
    """An event that happened: its time (s), its name and the direction of the crossing
    (+1: g rose through zero, -1: it fell)."""

    t: float
    name: str
    direction: int


def _common(name, default, value, direction, terminal):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError(f"event {name or default!r}: value must be a finite number, got "
                            f"{value!r}")
    if direction not in (-1, 0, 1) or isinstance(direction, bool):
        raise ArgumentError(f"event {name or default!r}: direction must be -1, 0 or +1, got "
                            f"{direction!r}")
    if not isinstance(terminal, bool):
        raise ArgumentError(f"event {name or default!r}: terminal must be True or False, got "
                            f"{terminal!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise ArgumentError(f"event name must be a non-empty string, got {name!r}")
    return name or default, name is None


def marker_crosses(marker: str, axis: str, value: float, direction: int = 0,
                   terminal: bool = True, name: str | None = None) -> Event:
    """The global ``axis`` ("x" or "y"; "z" too in a spatial model) coordinate of ``marker``
    passes ``value`` (m).

    Without ``name`` the event is named ``"<marker>.<axis>"``; where a run has several such
    events on one marker and axis, each is named after its value too (``"foot.y@0.1"``,
    then with the direction, ``"foot.y@0.1/up"``), so that every name in
    ``result.events`` is distinct."""
    if not isinstance(marker, str):
        raise ArgumentError(f"marker_crosses: marker must be a marker's name, got {marker!r}")
    if axis not in ("x", "y", "z"):
        raise ArgumentError(f"marker_crosses: axis must be 'x', 'y' or 'z', got {axis!r}")
    name, automatic = _common(name, f"{marker}.{axis}", value, direction, terminal)
    return Event(name, MARKER, marker, axis, float(value), direction, terminal, automatic)


def coordinate_crosses(element: str, value: float, direction: int = 0,
                       terminal: bool = True, name: str | None = None) -> Event:
    """The coordinate of force element ``element`` (a spring's length, a joint's relative
    angle over turns or slide, a body's angle: see :mod:`linkdyn.forces`) passes ``value``."""
    if not isinstance(element, str):
        raise ArgumentError(f"coordinate_crosses: element must be a force element's name, got "
                            f"{element!r}")
    name, automatic = _common(name, element, value, direction, terminal)
    return Event(name, COORDINATE, element, None, float(value), direction, terminal,
                 automatic)


def touchdown(contact: str, terminal: bool = True, name: str | None = None) -> Event:
    """Contact ``contact`` closes: its penetration becomes positive (a heel strike; a
    swinging contact's circle passing through the line does not count)."""
    if not isinstance(contact, str):
        raise ArgumentError(f"touchdown: contact must be a contact's name, got {contact!r}")
    name, automatic = _common(name, f"{contact}/touchdown", 0.0, 1, terminal)
    return Event(name, CONTACT, contact, None, 0.0, 1, terminal, automatic)


def passes(contact: str, terminal: bool = True, name: str | None = None) -> Event:
    """The circle of swinging contact ``contact`` passes its swing partner's, moving ahead
    along their line (a walker's swing foot passing the stance foot: once per step, a
    smooth Poincare section even for gaits whose feet bounce)."""
    if not isinstance(contact, str):
        raise ArgumentError(f"passes: contact must be a contact's name, got {contact!r}")
    name, automatic = _common(name, f"{contact}/passes", 0.0, 1, terminal)
    return Event(name, PASS, contact, None, 0.0, 1, terminal, automatic)


def compile_events(model, events) -> dict:
    """Arrays of the run's event kernel (see ``_kernels.RunState.set_events``): per event its
    kind, direction, the body and the coefficients of a marker coordinate (g = c . q_body +
    c0) or the force record of a coordinate event. The user's events come first, then the
    model's own: every contact's onset and separation, the stop and slip of contacts with
    friction, the pass and back of swinging contacts, the ends of arcs."""
    if events is None:
        events = ()
    if isinstance(events, Event):
        events = (events,)
    if isinstance(events, (str, bytes)) or not isinstance(events, (list, tuple)):
        raise ArgumentTypeError(f"events must be a linkdyn.events event or a list of them "
                                f"(marker_crossing, coordinate_crossing, passes, ...), got "
                                f"{events!r}")
    events = tuple(events)
    info = model.force_info
    records = {name: r for r, name, _ in info["contacts"]}
    frictions, swings = info.get("frictions", ()), info.get("swings", ())
    arcs = info.get("arcs", ())
    # Every contact's onset (+1) and separation (-1), recorded under its name.
    contact_events = tuple(Event(name, CONTACT, name, None, 0.0, 0, False)
                           for _, name, _ in info["contacts"])
    # Per contact with friction: a sliding contact comes to rest, a sticking one breaks
    # away (linkdyn.friction).
    friction_events = tuple(
        Event(f"{f[0]}/{what}", kind, f[0], None, 0.0, -1, False)
        for f in frictions for what, kind in (("stop", FRICTION_STOP), ("slip", FRICTION_SLIP)))
    # Per swinging contact: its circle passes its partner's along the line, and its circle
    # stops moving forward relative to the partner's.
    pass_events = tuple(Event(f"{w[0]}/{what}", kind, w[0], None, 0.0, direction, False)
                        for w in swings
                        for what, kind, direction in (("pass", PASS, 0), ("back", BACK, -1)))
    # Per arc: its two ends.
    arc_events = tuple(Event(f"{a[0]}/arc_{end}", ARC, a[0], None, 0.0, 0, False)
                       for a in arcs for end in ("min", "max"))
    names = {e.name for e in contact_events + friction_events + pass_events + arc_events}
    events = _distinct_names(events, names)
    n = len(events)
    out = dict(kind=np.zeros(n, dtype=np.intc), direction=np.zeros(n, dtype=np.intc),
               body=np.full(n, -1, dtype=np.intc), coef=np.zeros((n, 4)),
               index=np.zeros((n, 4), dtype=np.intc),
               const=np.zeros(n), record=np.full(n, -1, dtype=np.intc),
               gate=np.full(n, -1, dtype=np.intc), events=events)
    for i, ev in enumerate(events):
        _user_event(model, i, ev, names, out, records, swings)
    nco, nfr = len(contact_events), len(friction_events)
    _append(out, kind=[CONTACT] * nco, direction=[0] * nco, body=[-1] * nco,
            coef=np.zeros((nco, 4)), index=np.zeros((nco, 4)), const=[0.0] * nco,
            record=[records[e.name] for e in contact_events], gate=[-1] * nco)
    _append(out, kind=[e.kind for e in friction_events], direction=[-1] * nfr,
            body=[model.nc + i // 2 for i in range(nfr)], coef=np.zeros((nfr, 4)),
            index=np.zeros((nfr, 4)),
            const=[frictions[i // 2][4] for i in range(nfr)],
            record=[frictions[i // 2][1] for i in range(nfr)], gate=[-1] * nfr)
    pairs = [w for w in swings for _ in range(2)]
    _append(out, kind=[e.kind for e in pass_events],
            direction=[e.direction for e in pass_events], body=[w[4] for w in pairs],
            coef=[(*w[5], *w[7]) for w in pairs], index=np.zeros((len(pairs), 4)),
            const=[w[8] for w in pairs],
            record=[w[6] for w in pairs],
            # "back" matters only while the contact swings (its gate is off)
            gate=[(w[1] if e.kind == BACK else -1) for w, e in zip(pairs, pass_events)])
    # The arc's ends: g = sin(psi - a_min) and sin(a_max - psi) with psi the angle of -n
    # from the body's u, linear in (ux, uy) on the unit circle.
    nar = len(arc_events)
    _append(out, kind=[ARC] * nar, direction=[0] * nar,
            body=[a[2] for a in arcs for _ in range(2)],
            coef=[_arc_coef(a, end) for a in arcs for end in ("min", "max")],
            index=[4 * a[2] + np.arange(4) for a in arcs for _ in range(2)],
            const=[0.0] * nar, record=[-1] * nar, gate=[-1] * nar)
    out["events"] = events + contact_events + friction_events + pass_events + arc_events
    return out


def _distinct_names(events, taken) -> tuple:
    """The user's events with their automatic names made distinct: an automatic name shared
    with another event gets the event's value, then (if two share that too) its direction,
    then a count."""
    events = tuple(events)
    if not all(isinstance(e, Event) for e in events):
        return events                  # the per-event check names the stranger
    count = Counter(e.name for e in events)
    same_value = Counter((e.name, f"{e.value:g}") for e in events if e.automatic)
    used = set(taken) | {e.name for e in events if not e.automatic}
    out = []
    for e in events:
        name = e.name
        if e.automatic and (count[name] > 1 or name in used):
            name = f"{e.name}@{e.value:g}"
            if same_value[(e.name, f"{e.value:g}")] > 1:
                name += "/" + {1: "up", -1: "down", 0: "both"}[e.direction]
            base, k = name, 2
            while name in used:
                name, k = f"{base}#{k}", k + 1
        used.add(name)
        out.append(e if name == e.name else replace(e, name=name))
    return tuple(out)


def _user_event(model, i, ev, names, out, records, swings) -> None:
    """Row i of the event arrays: the user's event ``ev`` (checked against the model)."""
    if not isinstance(ev, Event) or ev.kind not in (MARKER, COORDINATE, CONTACT, PASS):
        raise ArgumentTypeError(f"events[{i}] must be a linkdyn.events.Event (from marker_crosses, "
                                f"coordinate_crosses, touchdown or passes), got "
                                f"{type(ev).__name__}")
    if ev.name in names:
        raise ArgumentError(f"events[{i}]: the name {ev.name!r} is used twice (contacts "
                            "report their events under their own names)")
    names.add(ev.name)
    out["kind"][i], out["direction"][i] = ev.kind, ev.direction
    if ev.kind == PASS:
        swing = {w[0]: w for w in swings}
        if ev.target not in swing:
            raise UnknownNameError(f"event {ev.name!r}: model {model.name!r} has no contact "
                                   f"{ev.target!r} with a swing partner (swinging contacts: "
                                   f"{name_list(swing)})")
        w = swing[ev.target]
        out["body"][i], out["record"][i], out["const"][i] = w[4], w[6], w[8]
        out["coef"][i] = (*w[5], *w[7])
    elif ev.kind == CONTACT:
        if ev.target not in records:
            raise UnknownNameError(f"event {ev.name!r}: model {model.name!r} has no contact "
                                   f"{ev.target!r} (contacts: {name_list(records)})")
        out["record"][i] = records[ev.target]
    elif ev.kind == MARKER:
        k = model.marker_index(ev.target)     # KeyError listing the markers
        out["const"][i] = -ev.value
        if model.space == "spatial":
            # r_a + p_1 e1_a + p_2 e2_a + p_3 e3_a (a the axis) of the marker's body
            a, b = "xyz".index(ev.axis), int(model.spatial_marker_body[k])
            out["body"][i] = b
            view = model.body_view[b, a + np.array([0, 3, 6, 9])]
            # a rod's absent axes: its r_a again, with the marker's zero component there
            out["index"][i] = np.where(view < 0, view[0], view)
            out["coef"][i] = (1.0, *model.spatial_marker_local[k])
            return
        if model.space != "planar" or ev.axis == "z":
            raise ArgumentError(f"event {ev.name!r}: marker events take the axes x and y of "
                                f"planar models and x, y and z of spatial models; model "
                                f"{model.name!r} is {model.space}"
                                + (" (a linkage: follow its markers with kinematics)"
                                   if model.space != "planar" else ""))
        b = int(model.marker_body[k])
        xi, eta = model.marker_local[k]
        out["body"][i] = b
        out["index"][i] = 4 * b + np.arange(4)
        out["coef"][i] = (1, 0, xi, -eta) if ev.axis == "x" else (0, 1, eta, xi)
    else:
        elements = model.force_info["elements"]
        if ev.target not in elements or not elements[ev.target][0]:
            raise UnknownNameError(f"event {ev.name!r}: model {model.name!r} has no force element "
                                   f"{ev.target!r} with a coordinate (force elements: "
                                   f"{name_list(model.force_names)})")
        out["record"][i] = elements[ev.target][0][0]
        out["const"][i] = -ev.value


def _append(out, **columns) -> None:
    """Append rows to every column of the event arrays, in their dtypes."""
    for key, values in columns.items():
        out[key] = np.concatenate([out[key], np.asarray(values, dtype=out[key].dtype)
                                   .reshape((-1,) + out[key].shape[1:])])


def _arc_coef(a, end):
    nx, ny = a[5]
    ang, sign = (a[3], 1.0) if end == "min" else (a[4], -1.0)
    ca, sa = math.cos(ang), math.sin(ang)
    return (0.0, 0.0, sign * (-ny * ca + nx * sa), sign * (nx * ca + ny * sa))
