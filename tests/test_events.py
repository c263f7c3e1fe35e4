"""Events located by the integrator (linkdyn.events, csrc/ld_bdf.c) against exact times."""

import math

import numpy as np
import pytest
from scipy.special import ellipk

import linkdyn
from linkdyn import events as ev


def pendulum(theta0=2.0):
    b = linkdyn.ModelBuilder("pendulum", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=2.0, position=(0.5 * math.sin(theta0),
                                                      -0.5 * math.cos(theta0)),
              angle=theta0 - math.pi / 2)
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_marker("tip", "rod.b")
    return b.build()


def test_pendulum_passes_the_bottom_at_quarter_periods():
    theta0 = 2.0
    period = 4 * ellipk(math.sin(theta0 / 2) ** 2) / math.sqrt(9.81 / (2.0 / 3.0))
    r = linkdyn.simulate(pendulum(theta0), 2 * period, rtol=1e-10, atol=1e-10,
                         events=[ev.marker_crosses("tip", "x", 0.0, terminal=False)])
    assert r.status == "success"
    times = [e.t for e in r.events]
    np.testing.assert_allclose(times, period * np.array([0.25, 0.75, 1.25, 1.75]), atol=1e-8)
    assert [e.direction for e in r.events] == [-1, 1, -1, 1]
    assert r.stats["events"] == 4 and r.stats["restarts"] == 4
    # Recording events leaves the motion as it was.
    plain = linkdyn.simulate(pendulum(theta0), 2 * period, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(r.q[-1], plain.q[-1], atol=1e-7)


def test_direction_filters_crossings():
    theta0 = 2.0
    period = 4 * ellipk(math.sin(theta0 / 2) ** 2) / math.sqrt(9.81 / (2.0 / 3.0))
    r = linkdyn.simulate(pendulum(theta0), 2 * period, rtol=1e-10, atol=1e-10,
                         events=[ev.marker_crosses("tip", "x", 0.0, direction=+1,
                                                   terminal=False, name="rising")])
    np.testing.assert_allclose([e.t for e in r.events], period * np.array([0.75, 1.75]),
                               atol=1e-8)
    assert {e.name for e in r.events} == {"rising"}


def test_terminal_event_stops_a_falling_body_at_the_ground():
    b = linkdyn.ModelBuilder("fall", gravity=(0.0, -9.81))
    b.add_body("ball", mass=1.0, inertia=0.01, position=(0.0, 2.0), velocity=(0.3, 0.0))
    b.add_marker("centre", "ball.cm")
    r = linkdyn.simulate(b.build(), 5.0, rtol=1e-10, atol=1e-10, dt_out=0.1,
                         events=[ev.marker_crosses("centre", "y", 0.0, direction=-1)])
    t_hit = math.sqrt(2 * 2.0 / 9.81)
    assert r.status == "event" and len(r.events) == 1
    assert abs(r.events[0].t - t_hit) < 1e-11
    assert r.t[-1] == r.events[0].t and abs(r.q[-1, 1]) < 1e-10
    assert np.all(np.diff(r.t) > 0) and r.t[-2] <= t_hit


def test_coordinate_event_counts_turns():
    # A flywheel on a weak torsional spring: theta = w0 / w sin(w t); 5 turns at
    # t = asin(10 pi w / w0) / w.
    j, k, w0 = 1.0 / 3.0, 0.01, 12.0
    w = math.sqrt(k / j)
    b = linkdyn.ModelBuilder("spin", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0), omega=w0,
              velocity=(0.0, 0.5 * w0))
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_torsional_spring_damper("torsion", "pin", k, 0.0, 0.0)
    r = linkdyn.simulate(b.build(), 10.0, rtol=1e-11, atol=1e-11,
                         events=[ev.coordinate_crosses("torsion", 10 * math.pi, +1,
                                                       name="five turns")])
    assert r.status == "event" and r.events[0].name == "five turns"
    assert abs(r.events[0].t - math.asin(10 * math.pi * w / w0) / w) < 1e-7
    assert abs(r.element_coordinate("torsion")[-1] - 10 * math.pi) < 1e-9


def test_automatic_names_of_events_on_one_marker_are_distinct():
    # Two crossings of the tip's x at different values, and one of y: every event of the
    # run is reported under its own name, at the exact quarter period for x = 0.
    theta0 = 2.0
    period = 4 * ellipk(math.sin(theta0 / 2) ** 2) / math.sqrt(9.81 / (2.0 / 3.0))
    r = linkdyn.simulate(pendulum(theta0), period, rtol=1e-10, atol=1e-10,
                         events=[ev.marker_crosses("tip", "x", 0.0, terminal=False),
                                 ev.marker_crosses("tip", "x", 0.5, terminal=False),
                                 ev.marker_crosses("tip", "y", -0.5, terminal=False)])
    names = {e.name for e in r.events}
    assert names == {"tip.x@0", "tip.x@0.5", "tip.y"}
    first_zero = min(e.t for e in r.events if e.name == "tip.x@0")
    assert abs(first_zero - period / 4) < 1e-8


def test_bad_events_raise():
    model = pendulum()
    with pytest.raises(KeyError, match="no marker 'hand'"):
        linkdyn.simulate(model, 1.0, events=[ev.marker_crosses("hand", "x", 0.0)])
    with pytest.raises(KeyError, match="force element"):
        linkdyn.simulate(model, 1.0, events=[ev.coordinate_crosses("motor", 0.0)])
    with pytest.raises(ValueError, match="direction"):
        ev.marker_crosses("tip", "x", 0.0, direction=2)
    with pytest.raises(ValueError, match="axis"):
        ev.marker_crosses("tip", "w", 0.0)
    with pytest.raises(ValueError, match="x and y of planar models.*is planar"):
        linkdyn.simulate(model, 1.0, events=[ev.marker_crosses("tip", "z", 0.0)])
    with pytest.raises(ValueError, match="finite"):
        ev.marker_crosses("tip", "x", float("nan"))
    with pytest.raises(ValueError, match="twice"):
        linkdyn.simulate(model, 1.0, events=[ev.marker_crosses("tip", "x", 0.0, name="a"),
                                              ev.marker_crosses("tip", "x", 0.1, name="a")])
    with pytest.raises(TypeError, match="events\\[0\\]"):
        linkdyn.simulate(model, 1.0, events=["tip.x = 0"])
