"""The passive walker of Zheng and Wang: each gait's defining behaviour, the swing-leg rule, the
energy balance, and the limit cycles found by periodic_orbit with their Floquet
multipliers."""

import json
from pathlib import Path
from importlib import resources

import numpy as np
import pytest

import linkdyn
from linkdyn.events import passes, touchdown
from linkdyn.models.walker import GAITS, gait_file

RUNS = {}
T_END = {"walker_gait4": 40.0}      # time to come to a stand and for the rocking to die down


def run(name):
    if name not in RUNS:
        model = linkdyn.load_model(name)
        RUNS[name] = linkdyn.simulate(model, T_END.get(name, 10.0), rtol=1e-9, atol=1e-11,
                                      dt_out=5e-4)
    return RUNS[name]


def touchdowns(r):
    return [e for e in r.events if e.name in ("foot1", "foot2") and e.direction == 1]


def slide_phases(r, foot):
    """(start, end) of every interval in which ``foot`` slides."""
    out, start = [], None
    for t, name, mode in r.friction_modes:
        if name != foot:
            continue
        sliding = mode in ("slide+", "slide-")
        if sliding and start is None:
            start = t
        elif not sliding and start is not None:
            out.append((start, t))
            start = None
    return out


@pytest.mark.parametrize("name", sorted(GAITS))
def test_gait_files_are_the_documented_parameters(name):
    text = resources.files("linkdyn.models").joinpath(f"{name}.json").read_text()
    data = json.loads(text)
    assert data == json.loads(json.dumps(gait_file(name)))
    assert any("Hunt-Crossley" in note for note in data["notes"])


def walks(r):
    hip = r.marker("hip")
    return hip[:, 1].min() > 0.37 and hip[-1, 0] - hip[0, 0] > 3.0


def test_gait1_walks_without_bounce_or_stance_slip():
    r = run("walker_gait1")
    assert walks(r)
    names = [e.name for e in touchdowns(r)]
    assert len(names) >= 20
    # No bounce: the feet strike alternately.
    assert all(a != b for a, b in zip(names, names[1:]))
    # The feet slide only for milliseconds while touching down or lifting off.
    for foot in ("foot1", "foot2"):
        phases = slide_phases(r, foot)
        assert phases and max(b - a for a, b in phases) < 0.01
    # The stance foot sticks: friction balances the walker without slip most of the time.
    modes = [m for _, _, m in r.friction_modes]
    assert modes.count("stick") >= len(names)


def test_gait2_leg1_slips_after_its_strikes_then_sticks():
    r = run("walker_gait2")
    assert walks(r)
    names = [e.name for e in touchdowns(r)]
    assert all(a != b for a, b in zip(names, names[1:]))      # no bounce
    long1 = [p for p in slide_phases(r, "foot1") if p[1] - p[0] > 0.03]
    assert len(long1) >= 8
    assert max(b - a for a, b in slide_phases(r, "foot2")) < 0.01
    strikes1 = [e.t for e in touchdowns(r) if e.name == "foot1"]
    for start, end in long1:
        # Each long slide starts at a heel strike of foot 1 and ends in sticking.
        assert min(abs(start - t) for t in strikes1) < 0.002
        after = [m for t, n, m in r.friction_modes if n == "foot1" and t == end]
        assert after == ["stick"]


def test_gait3_stance_foot_bounces_without_slipping():
    r = run("walker_gait3")
    assert walks(r)
    names = [e.name for e in touchdowns(r)]
    runs, k = [], 0
    while k < len(names):
        j = k
        while j < len(names) and names[j] == names[k]:
            j += 1
        runs.append(j - k)
        k = j
    # After the first steps every step is a strike and bounces (>= 3 touchdowns).
    assert min(runs[2:-1]) >= 3
    for foot in ("foot1", "foot2"):
        assert max(b - a for a, b in slide_phases(r, foot)) < 0.01
    # Both feet are off the floor at times (the walk still is a walk: the hip stays up).
    f1 = r.element_force("foot1")
    f2 = r.element_force("foot2")
    assert np.any((f1 == 0) & (f2 == 0) & (r.t > 1.0))


def test_gait4_comes_to_a_stand_held_by_static_friction():
    r = run("walker_gait4")
    strikes = [e.t for e in touchdowns(r)]
    assert len(strikes) >= 20 and strikes[-1] < 20.0
    # From 20 s on no mode changes: both feet stick, both carry.
    assert all(t < 20.0 for t, _, _ in r.friction_modes)
    last = {name: mode for _, name, mode in r.friction_modes}
    assert last == {"foot1": "stick", "foot2": "stick"}
    late = r.t > 20.0
    assert np.all(r.element_force("foot1")[late] > 1.0)
    assert np.all(r.element_force("foot2")[late] > 1.0)
    # Static friction, not zero once the rocking has died down: the split legs push the
    # feet apart; what remains of the two forces on average holds the walker against the
    # slope, 2 m g sin(slope).
    f1, f2 = r.friction_force("foot1"), r.friction_force("foot2")
    end = r.t > 38.0
    assert np.min(np.abs(f1[end])) > 0.05 and np.min(np.abs(f2[end])) > 0.05
    slope, g = GAITS["walker_gait4"]["slope"], 9.8
    avg = np.mean((f1 + f2)[r.t > 30.0])
    np.testing.assert_allclose(avg, -2 * g * np.sin(slope), rtol=0.2)
    # On round feet the standing walker still rocks (the feet roll without slipping); the
    # contact damping takes the rocking out.
    speed = np.max(np.abs(r.v), axis=1)
    assert speed[r.t > 35.0].max() < 0.5 * speed[(r.t > 20.0) & (r.t < 25.0)].max()


def test_swing_leg_ignores_the_floor_until_it_is_clear_ahead():
    r = run("walker_gait1")
    model = r.model
    depth2 = 0.08 - r.element_coordinate("foot2")
    swinging = np.zeros(r.t.shape[0], dtype=bool)
    spans, start = [], None
    for t, name, mode in r.friction_modes:
        if name == "foot2" and mode == "swing":
            start = t
        elif name == "foot2" and mode == "clear" and start is not None:
            spans.append((start, t))
            start = None
    assert len(spans) >= 8
    for a, b in spans:
        swinging |= (r.t > a) & (r.t < b)
    # While it swings through, foot 2's circle dips below the floor but feels no force.
    assert np.any(depth2[swinging] > 1e-4)
    assert np.all(r.element_force("foot2")[swinging] == 0.0)
    assert np.all(r.friction_force("foot2")[swinging] == 0.0)
    assert model.force_info["swings"]


@pytest.mark.parametrize("name", sorted(GAITS))
def test_walker_energy_lost_is_the_work_of_contact_damping_and_friction(name):
    r = run(name)
    lost = r.energy - r.energy[0]
    np.testing.assert_allclose(lost, r.work, atol=2e-6 * abs(r.energy[0]) + 1e-6)
    # The contacts dissipate what the walker had and what gravity feeds it down the slope.
    assert r.work[-1] < -0.1


def test_gait1_is_a_stable_limit_cycle():
    model = linkdyn.load_model("walker_gait1")
    r = run("walker_gait1")
    i = np.searchsorted(r.t, 8.0)
    orbit = linkdyn.periodic_orbit(model, touchdown("foot1"), r.q[i], r.v[i],
                                   translation="x")
    assert orbit.residual < 1e-6
    assert orbit.stable and 0.2 < np.max(np.abs(orbit.multipliers)) < 0.95
    # Two steps per period: the period is twice the mean step time of the long run.
    strikes = [e.t for e in touchdowns(r) if e.name == "foot1" and e.t > 5.0]
    np.testing.assert_allclose(orbit.period, np.mean(np.diff(strikes)), rtol=1e-4)
    assert orbit.shift > 0.3     # one stride down the slope


def limit_cycle(name):
    """The gait's limit cycle from its state at 8 s, on the section where foot 1 passes
    foot 2 (touchdowns are no section for a bouncing gait: a perturbation may add a
    bounce; the pass happens once per step)."""
    model = linkdyn.load_model(name)
    r = run(name)
    i = np.searchsorted(r.t, 8.0)
    return r, linkdyn.periodic_orbit(model, passes("foot1"), r.q[i], r.v[i],
                                     swinging=r.swinging_at(r.t[i]), translation="x")


def test_gait3_is_a_stable_limit_cycle_through_its_bounces():
    r, orbit = limit_cycle("walker_gait3")
    assert orbit.residual < 1e-6 and orbit.stable
    assert orbit.swinging == ("foot1",)
    strikes = [e.t for e in r.events if e.name == "foot1/pass" and e.direction == 1]
    np.testing.assert_allclose(orbit.period, np.mean(np.diff(strikes[-6:])), rtol=1e-4)


def mid_swing():
    """Gait I's run and the row half-way through its first swing after t = 7 s."""
    r = run("walker_gait1")
    start = next(t for t, name, mode in r.friction_modes if mode == "swing" and t > 7.0)
    end = next(t for t, name, mode in r.friction_modes if mode == "clear" and t > start)
    return r, int(np.searchsorted(r.t, 0.5 * (start + end)))


def test_a_run_started_mid_step_needs_the_swinging_feet():
    model = linkdyn.load_model("walker_gait1")
    r, i = mid_swing()
    swinging = r.swinging_at(r.t[i])
    assert len(swinging) == 1
    cont = linkdyn.simulate(model, r.t[-1], t0=r.t[i], q0=r.q[i], v0=r.v[i],
                            swinging=swinging, rtol=1e-9, atol=1e-11, t_out=r.t[i:])
    np.testing.assert_allclose(cont.q, r.q[i:], atol=1e-5)
    with pytest.raises(ValueError, match="no contact 'leg1' with a swing partner"):
        linkdyn.simulate(model, 0.1, swinging=["leg1"])


@pytest.mark.slow
def test_gait2_is_a_stable_limit_cycle():
    _, orbit = limit_cycle("walker_gait2")
    assert orbit.residual < 1e-6 and orbit.stable


@pytest.mark.parametrize("name", sorted(GAITS))
def test_gaits_agree_with_the_seeds_method_integrated_independently(name):
    # tests/data/make_walker_reference.py: four generalised coordinates, LSODA with events,
    # stick-slip by enumeration (benchmarks/walker_baseline.py); measured agreement 1e-6 to
    # 7e-6 m after 10 s and 84 touchdowns.
    ref = json.loads((Path(__file__).parent / "data" / "walker_reference.json").read_text())
    r = run(name)
    for key, values in ref[name].items():
        i = int(np.argmin(np.abs(r.t - float(key))))
        assert abs(r.t[i] - float(key)) < 1e-9
        np.testing.assert_allclose(r.marker("hip")[i], values["hip"], atol=1e-4)
        theta = [r.body_angle(leg)[i] + 0.5 * np.pi for leg in ("leg1", "leg2")]
        theta = np.remainder(np.array(theta) - values["theta"] + np.pi, 2 * np.pi) - np.pi
        np.testing.assert_allclose(theta, 0.0, atol=3e-4)
        assert len([e for e in touchdowns(r) if e.t <= r.t[i]]) == values["touchdowns"]


@pytest.mark.parametrize("tol", [1e-7, 1e-8])
def test_explicit_steps_do_not_step_over_a_brief_stop(tol):
    # Gait III at t = 1.017 s: foot1 starts to slip and stops again 1.1 ms later, inside one
    # of the explicit method's steps of several ms, whose ends show no change of sign. The
    # driver samples the event functions inside explicit steps as well (ld_bdf.c,
    # interior_crossing); without that the stop was missed at these tolerances and the
    # walker fell (31 touchdowns instead of 84, the hip 3.9 m off after 10 s). Measured: all
    # 407 events, the hip within 1.5e-7 m of the reference.
    ref = json.loads((Path(__file__).parent / "data" / "walker_reference.json").read_text())
    model = linkdyn.load_model("walker_gait3")
    r = linkdyn.simulate(model, 10.0, rtol=tol, atol=tol / 100, t_out=[0.0, 10.0])
    assert r.stats["rk_steps"] > 0
    assert r.stats["events"] == ref["walker_gait3"]["10"]["events"]
    assert len(touchdowns(r)) == ref["walker_gait3"]["10"]["touchdowns"]
    np.testing.assert_allclose(r.marker("hip")[-1], ref["walker_gait3"]["10"]["hip"],
                               atol=1e-5)


def test_swing_rule_holds_only_while_the_foot_swings_forward():
    # Mid-swing of gait I with every velocity reversed: the swing foot now moves backward
    # relative to the stance foot, so it is no longer swinging forward and feels the floor.
    model = linkdyn.load_model("walker_gait1")
    r, i = mid_swing()
    foot = r.swinging_at(r.t[i])[0]
    ahead = linkdyn.simulate(model, r.t[i] + 1e-3, t0=r.t[i], q0=r.q[i], v0=r.v[i],
                             swinging=[foot], rtol=1e-9, atol=1e-11)
    assert [m for t, n, m in ahead.friction_modes if n == foot][:1] == ["swing"]
    assert all(m == "swing" for t, n, m in ahead.friction_modes if n == foot)
    back = linkdyn.simulate(model, r.t[i] + 1e-3, t0=r.t[i], q0=r.q[i], v0=-r.v[i],
                            swinging=[foot], rtol=1e-9, atol=1e-11)
    modes = [(t, m) for t, n, m in back.friction_modes if n == foot]
    assert modes[:2] == [(r.t[i], "swing"), (r.t[i], "clear")]


def test_ctrl_c_stops_a_run_in_a_storm_of_contact_events():
    # On the BDF at rtol 1e-6 the walker's feet switch stick-slip modes thousands of times
    # within 1e-7 s at each stance (some 31,000 events in 20 s): the run spends most of its
    # time between compiled calls (events, mode decisions). Ctrl-C must stop it there too,
    # with what it computed. The 100 s take the BDF some 15 s, so Ctrl-C after 1 s comes
    # well inside the run (the default method, explicit here, meets no such storm and ends
    # the 100 s in about a second: no test of this path).
    from conftest import ctrl_c_after

    model = linkdyn.load_model("walker_gait1")
    with ctrl_c_after(1.0) as caught:
        r = linkdyn.simulate(model, 100.0, rtol=1e-6, atol=1e-6, dt_out=0.01, method="bdf")
    assert r.status == "interrupted" and r.t[-1] < 100.0
    assert any("interrupted" in str(w.message) for w in caught)
    assert np.all(np.diff(r.t) > 0) and np.isfinite(r.q).all()


def test_a_chattering_contact_ends_the_run_with_its_name_and_time():
    # At rtol 1e-4 foot1 comes to rest and slips again at one instant without end (a Zeno
    # point of the stick-slip model at this tolerance, at t = 0.327 s; foot2's at 0.33 s
    # while the contacts' forces came on with their penetration inside a step): the run
    # stops with an error that names the contact and the time, and keeps the rows computed
    # before it (the BDF's path; the explicit method's steps at 1e-4 do not meet this point).
    model = linkdyn.load_model("walker_gait1")
    with pytest.raises(linkdyn.SimulationError, match=r"'foot1' switched modes 20000 times") \
            as caught:
        linkdyn.simulate(model, 2.0, rtol=1e-4, atol=1e-4, dt_out=0.01, method="bdf")
    err = caught.value
    assert 0.3 < err.t < 0.34 and "foot1" in err.constraints
    assert err.result is not None and err.result.t[-1] <= err.t


def test_the_step_budget_is_the_runs_not_each_calls():
    # Every event restarts the integrator; the budget still counts the whole run.
    model = linkdyn.load_model("walker_gait1")
    for method, budget in (("bdf", 3000), ("auto", 100)):
        with pytest.raises(linkdyn.SimulationError, match=f"max_steps = {budget}, is spent"):
            linkdyn.simulate(model, 2.0, rtol=1e-6, atol=1e-6, max_steps=budget,
                             method=method)


def test_a_failed_orbit_search_says_why_and_what_helps():
    # From the model's initial state (far from the gait) the shooting stalls: the error
    # names the stall and the usual remedies instead of a bare list of residuals.
    model = linkdyn.load_model("walker_gait1")
    with pytest.raises(linkdyn.PeriodicOrbitError) as caught:
        linkdyn.periodic_orbit(model, touchdown("foot1"), translation="x", max_iter=3)
    text = str(caught.value)
    assert "stalled at" in text and "local minimum" in text
    assert "start from a state on or near the orbit" in text and "crossings=" in text
    assert caught.value.residual > 1e-3 and caught.value.x.shape == (2 * model.nq,)


@pytest.mark.parametrize("where", ["first map", "difference", "trial step"])
def test_ctrl_c_stops_the_orbit_search_with_its_latest_state(monkeypatch, where):
    """Ctrl-C in any of the search's maps ends it with KeyboardInterrupt carrying the
    latest state on the section. An interrupted run was taken for a missed section: a
    PeriodicOrbitError, which the search's safeguard swallows when it tries a Newton step
    (the search went on)."""
    import dataclasses

    from linkdyn.solve import periodic

    model = linkdyn.chain(1)            # a pendulum: one map per swing through x = 0
    real, calls = periodic.simulate, []
    # the first map, then per iteration P(x), 2 nq differences, P(y) and the trial's map
    stop = {"first map": 1, "difference": 3, "trial step": 2 + 2 * model.nq + 2}[where]

    def simulate(*args, **kwargs):
        calls.append(1)
        r = real(*args, **kwargs)
        return dataclasses.replace(r, status="interrupted") if len(calls) == stop else r

    monkeypatch.setattr(periodic, "simulate", simulate)
    section = linkdyn.events.marker_crosses("tip", "x", 0.0, direction=1)
    with pytest.raises(KeyboardInterrupt) as info:
        linkdyn.periodic_orbit(model, section, tol=1e-14, max_iter=5)
    assert len(calls) == stop
    assert info.value.x.shape == (2 * model.nq,)
    tip = np.ravel(model.marker_positions(info.value.x[:model.nq]))
    if where == "first map":        # the consistent guess, before any residual
        np.testing.assert_allclose(info.value.x[:model.nq], model.q0, atol=1e-12)
        assert np.isnan(info.value.residual) and abs(tip[0]) > 0.05
    else:
        # on the section (the tip at x = 0) with the residual of its own map
        assert abs(tip[0]) < 1e-9 and np.isfinite(info.value.residual)


def test_ctrl_c_pressed_between_the_searchs_runs_is_not_lost(monkeypatch):
    """Ctrl-C pressed while the orbit search runs Python between its maps (here from a
    finaliser, where Python's KeyboardInterrupt would be dropped) ends the search at its
    next map with KeyboardInterrupt and the latest state, as one inside a run does."""
    from conftest import ctrl_c_in_a_finaliser
    from linkdyn.solve import periodic

    model = linkdyn.chain(1)
    real, calls = periodic.simulate, []

    def simulate(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:             # after the first map and P(x): a difference's map
            ctrl_c_in_a_finaliser()
        return real(*args, **kwargs)

    monkeypatch.setattr(periodic, "simulate", simulate)
    section = linkdyn.events.marker_crosses("tip", "x", 0.0, direction=1)
    with pytest.raises(KeyboardInterrupt) as info:
        linkdyn.periodic_orbit(model, section, tol=1e-14, max_iter=5)
    assert len(calls) == 3 and np.isfinite(info.value.residual)
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
