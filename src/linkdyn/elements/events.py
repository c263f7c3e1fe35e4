"""Events: conditions the integrator locates in time while it runs (compiled: no Python in
the step loop).

An event is a function g(t, q, v) whose change of sign the integrator finds on its dense
output, to ``event_tol`` seconds (``simulate``'s option; default 1e-12 max(1, |t|)):

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
from dataclasses import dataclass

import numpy as np

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


@dataclass(frozen=True)
class EventRecord:
    """An event that happened: its time (s), its name and the direction of the crossing
    (+1: g rose through zero, -1: it fell)."""

    t: float
    name: str
    direction: int


def _common(name, default, value, direction, terminal):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"event {name or default!r}: value must be a finite number, got "
                         f"{value!r}")
    if direction not in (-1, 0, 1) or isinstance(direction, bool):
        raise ValueError(f"event {name or default!r}: direction must be -1, 0 or +1, got "
                         f"{direction!r}")
    if not isinstance(terminal, bool):
        raise ValueError(f"event {name or default!r}: terminal must be True or False, got "
                         f"{terminal!r}")
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"event name must be a non-empty string, got {name!r}")
    return name or default


def marker_crosses(marker: str, axis: str, value: float, direction: int = 0,
                   terminal: bool = True, name: str | None = None) -> Event:
    """The global ``axis`` ("x" or "y") coordinate of ``marker`` passes ``value`` (m)."""
    if not isinstance(marker, str):
        raise ValueError(f"marker_crosses: marker must be a marker's name, got {marker!r}")
    if axis not in ("x", "y"):
        raise ValueError(f"marker_crosses: axis must be 'x' or 'y', got {axis!r}")
    name = _common(name, f"{marker}.{axis}", value, direction, terminal)
    return Event(name, MARKER, marker, axis, float(value), direction, terminal)


def coordinate_crosses(element: str, value: float, direction: int = 0,
                       terminal: bool = True, name: str | None = None) -> Event:
    """The coordinate of force element ``element`` (a spring's length, a joint's relative
    angle over turns or slide, a body's angle: see :mod:`linkdyn.forces`) passes ``value``."""
    if not isinstance(element, str):
        raise ValueError(f"coordinate_crosses: element must be a force element's name, got "
                         f"{element!r}")
    name = _common(name, element, value, direction, terminal)
    return Event(name, COORDINATE, element, None, float(value), direction, terminal)


def touchdown(contact: str, terminal: bool = True, name: str | None = None) -> Event:
    """Contact ``contact`` closes: its penetration becomes positive (a heel strike; a
    swinging contact's circle passing through the line does not count)."""
    if not isinstance(contact, str):
        raise ValueError(f"touchdown: contact must be a contact's name, got {contact!r}")
    name = _common(name, f"{contact}/touchdown", 0.0, 1, terminal)
    return Event(name, CONTACT, contact, None, 0.0, 1, terminal)


def passes(contact: str, terminal: bool = True, name: str | None = None) -> Event:
    """The circle of swinging contact ``contact`` passes its swing partner's, moving ahead
    along their line (a walker's swing foot passing the stance foot: once per step, a
    smooth Poincare section even for gaits whose feet bounce)."""
    if not isinstance(contact, str):
        raise ValueError(f"passes: contact must be a contact's name, got {contact!r}")
    name = _common(name, f"{contact}/passes", 0.0, 1, terminal)
    return Event(name, PASS, contact, None, 0.0, 1, terminal)


def compile_events(model, events) -> dict:
    """Arrays of the run's event kernel (see ``_kernels.RunState.set_events``): per event its
    kind, direction, the body and the coefficients of a marker coordinate (g = c . q_body +
    c0) or the force record of a coordinate event."""
    if events is None:
        events = ()
    if isinstance(events, Event):
        events = (events,)
    events = tuple(events)
    # Every contact's onset (+1) and separation (-1), recorded under its name.
    contact_events = tuple(Event(name, CONTACT, name, None, 0.0, 0, False)
                           for _, name, _ in model.force_info["contacts"])
    records = {name: r for r, name, _ in model.force_info["contacts"]}
    # Per contact with friction: a sliding contact comes to rest, a sticking one breaks
    # away (linkdyn.friction).
    frictions = model.force_info.get("frictions", ())
    friction_events = tuple(
        Event(f"{f[0]}/{what}", kind, f[0], None, 0.0, -1, False)
        for f in frictions for what, kind in (("stop", FRICTION_STOP), ("slip", FRICTION_SLIP)))
    # Per swinging contact: its circle passes its partner's along the line.
    swings = model.force_info.get("swings", ())
    # and its circle stops moving forward relative to the partner's.
    pass_events = tuple(Event(f"{w[0]}/{what}", kind, w[0], None, 0.0, direction, False)
                        for w in swings
                        for what, kind, direction in (("pass", PASS, 0), ("back", BACK, -1)))
    names = {e.name for e in contact_events + friction_events + pass_events}
    names |= {f"{a[0]}/arc_{end}" for a in model.force_info.get("arcs", ())
              for end in ("min", "max")}
    n = len(events)
    out = dict(kind=np.zeros(n, dtype=np.intc), direction=np.zeros(n, dtype=np.intc),
               body=np.full(n, -1, dtype=np.intc), coef=np.zeros((n, 4)),
               const=np.zeros(n), record=np.full(n, -1, dtype=np.intc),
               gate=np.full(n, -1, dtype=np.intc), events=events)
    for i, ev in enumerate(events):
        if not isinstance(ev, Event) or ev.kind not in (MARKER, COORDINATE, CONTACT, PASS):
            raise TypeError(f"events[{i}] must be a linkdyn.events.Event (from marker_crosses, "
                            f"coordinate_crosses, touchdown or passes), got "
                            f"{type(ev).__name__}")
        if ev.name in names:
            raise ValueError(f"events[{i}]: the name {ev.name!r} is used twice (contacts "
                             "report their events under their own names)")
        names.add(ev.name)
        out["kind"][i], out["direction"][i] = ev.kind, ev.direction
        if ev.kind == PASS:
            swing = {w[0]: w for w in swings}
            if ev.target not in swing:
                raise KeyError(f"event {ev.name!r}: model {model.name!r} has no contact "
                               f"{ev.target!r} with a swing partner (swinging contacts: "
                               f"{', '.join(swing) or 'none'})")
            w = swing[ev.target]
            out["body"][i], out["record"][i], out["const"][i] = w[4], w[6], w[8]
            out["coef"][i] = (*w[5], *w[7])
        elif ev.kind == CONTACT:
            if ev.target not in records:
                raise KeyError(f"event {ev.name!r}: model {model.name!r} has no contact "
                               f"{ev.target!r} (contacts: {', '.join(records) or 'none'})")
            out["record"][i] = records[ev.target]
        elif ev.kind == MARKER:
            k = model.marker_index(ev.target)     # KeyError listing the markers
            b = int(model.marker_body[k])
            xi, eta = model.marker_local[k]
            out["body"][i] = b
            out["coef"][i] = (1, 0, xi, -eta) if ev.axis == "x" else (0, 1, eta, xi)
            out["const"][i] = -ev.value
        else:
            elements = model.force_info["elements"]
            if ev.target not in elements or not elements[ev.target][0]:
                raise KeyError(f"event {ev.name!r}: model {model.name!r} has no force element "
                               f"{ev.target!r} with a coordinate (force elements: "
                               f"{', '.join(model.force_names) or 'none'})")
            out["record"][i] = elements[ev.target][0][0]
            out["const"][i] = -ev.value
    for key, values in (("kind", [CONTACT] * len(contact_events)),
                        ("direction", [0] * len(contact_events)),
                        ("body", [-1] * len(contact_events)),
                        ("coef", np.zeros((len(contact_events), 4))),
                        ("const", [0.0] * len(contact_events)),
                        ("record", [records[e.name] for e in contact_events]),
                        ("gate", [-1] * len(contact_events))):
        out[key] = np.concatenate([out[key], np.asarray(values, dtype=out[key].dtype)
                                   .reshape((-1,) + out[key].shape[1:])])
    nfr = len(friction_events)
    for key, values in (("kind", [e.kind for e in friction_events]),
                        ("direction", [-1] * nfr),
                        ("body", [model.nc + i // 2 for i in range(nfr)]),
                        ("coef", np.zeros((nfr, 4))),
                        ("const", [frictions[i // 2][4] for i in range(nfr)]),
                        ("record", [frictions[i // 2][1] for i in range(nfr)]),
                        ("gate", [-1] * nfr)):
        out[key] = np.concatenate([out[key], np.asarray(values, dtype=out[key].dtype)
                                   .reshape((-1,) + out[key].shape[1:])])
    pairs = [w for w in swings for _ in range(2)]
    for key, values in (("kind", [e.kind for e in pass_events]),
                        ("direction", [e.direction for e in pass_events]),
                        ("body", [w[4] for w in pairs]),
                        ("coef", [(*w[5], *w[7]) for w in pairs]),
                        ("const", [w[8] for w in pairs]),
                        ("record", [w[6] for w in pairs]),
                        # "back" matters only while the contact swings (its gate is off)
                        ("gate", [(w[1] if e.kind == BACK else -1)
                                  for w, e in zip(pairs, pass_events)])):
        out[key] = np.concatenate([out[key], np.asarray(values, dtype=out[key].dtype)
                                   .reshape((-1,) + out[key].shape[1:])])
    # Per arc: its two ends, g = sin(psi - a_min) and sin(a_max - psi) with psi the angle of
    # -n from the body's u: linear in (ux, uy) on the unit circle.
    arcs = model.force_info.get("arcs", ())
    arc_events = tuple(Event(f"{a[0]}/arc_{end}", ARC, a[0], None, 0.0, 0, False)
                       for a in arcs for end in ("min", "max"))

    def arc_coef(a, end):
        nx, ny = a[5]
        ang, sign = (a[3], 1.0) if end == "min" else (a[4], -1.0)
        ca, sa = math.cos(ang), math.sin(ang)
        return (0.0, 0.0, sign * (-ny * ca + nx * sa), sign * (nx * ca + ny * sa))

    for key, values in (("kind", [ARC] * len(arc_events)),
                        ("direction", [0] * len(arc_events)),
                        ("body", [a[2] for a in arcs for _ in range(2)]),
                        ("coef", [arc_coef(a, end) for a in arcs for end in ("min", "max")]),
                        ("const", [0.0] * len(arc_events)),
                        ("record", [-1] * len(arc_events)),
                        ("gate", [-1] * len(arc_events))):
        out[key] = np.concatenate([out[key], np.asarray(values, dtype=out[key].dtype)
                                   .reshape((-1,) + out[key].shape[1:])])
    out["events"] = events + contact_events + friction_events + pass_events + arc_events
    return out
