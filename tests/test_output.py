"""Selective output (linkdyn.output): recorded series against whole-row runs, bit for bit,
through buffers of any size; output times "final" and "events"; the size estimate; errors."""

import math
import pickle

import numpy as np
import pytest
from scipy.special import ellipk

import linkdyn
import linkdyn.output as output
from linkdyn import events as ev


def whole(result, key):
    value = getattr(result, key[0])
    return value if len(key) == 1 else value(key[1])


def assert_same_series(recorded, full):
    assert np.array_equal(recorded.t, full.t)
    assert recorded.recorded
    for key, value in recorded.recorded.items():
        assert np.array_equal(value, whole(full, key)), key
        assert np.array_equal(whole(recorded, key), value)   # the accessor serves it


@pytest.fixture(params=[1 << 20, 5 * 93, 1], ids=["one-buffer", "5-row-buffers", "1-row"])
def buffer_values(request, monkeypatch):
    monkeypatch.setattr(output, "BUFFER_VALUES", request.param)
    return request.param


def test_jansen_series_equal_whole_rows(jansen, buffer_values):
    full = linkdyn.simulate(jansen, 2.0, rtol=1e-8, atol=1e-8)
    record = linkdyn.Record(markers=jansen.marker_names, bodies=["L1", "L4"],
                            joints=["J1", "J2"], invariants=output.INVARIANTS)
    r = linkdyn.simulate(jansen, 2.0, rtol=1e-8, atol=1e-8, record=record)
    assert_same_series(r, full)
    assert r.q is None and r.v is None and r.lam is None and r.z is None
    # The crank turns several times: its angle stays continuous across the buffers.
    assert np.ptp(r.body_angle("L1")) > 4 * math.pi
    assert r.stats["steps"] == full.stats["steps"]
    assert r.stats["output_rows"] == full.stats["output_rows"] == len(full.t)


def test_forces_and_controller_series_equal_whole_rows(buffer_values):
    b = linkdyn.ModelBuilder("pd", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "rod.a", "ground.O")
    b.add_motor("motor", "pin")
    b.add_spring_damper("spring", "ground.O", "rod.b", stiffness=30.0, damping=0.5,
                        free_length=0.8)
    b.add_force("push", "rod.b", law_x=0.3)
    model = b.build()

    def pd(t, state):
        theta, rate = state.element_coordinate("motor")
        return {"motor": 20.0 * (0.5 - theta) - 2.0 * rate}

    run = dict(rtol=1e-9, atol=1e-9, dt_out=0.003, controller=pd, control_period=0.01)
    full = linkdyn.simulate(model, 1.0, **run)
    record = linkdyn.Record(joints="pin", elements=["motor", "spring", "push"],
                            invariants=["energy", "work"])
    r = linkdyn.simulate(model, 1.0, record=record, **run)
    assert_same_series(r, full)
    # The balance the whole rows close closes from the recorded series alone.
    assert np.abs(r.energy - r.energy[0] - r.work).max() < 1e-6
    assert ("element_coordinate", "push") not in r.recorded       # a point load has none


def test_friction_and_events_series_equal_whole_rows(buffer_values):
    model = linkdyn.load_model("walker_gait1")
    full = linkdyn.simulate(model, 2.0, rtol=1e-8, atol=1e-10)
    r = linkdyn.simulate(model, 2.0, rtol=1e-8, atol=1e-10,
                         record=linkdyn.Record(markers="hip", bodies=["leg1", "leg2"],
                                               joints="H", invariants=["energy"]))
    assert len(full.events) >= 4 and full.friction_modes
    assert_same_series(r, full)
    assert r.events == full.events and r.friction_modes == full.friction_modes


def test_final_row_is_the_last_row_of_a_whole_run(jansen):
    full = linkdyn.simulate(jansen, 1.0, rtol=1e-8, atol=1e-8)
    last = linkdyn.simulate(jansen, 1.0, rtol=1e-8, atol=1e-8, t_out="final")
    assert last.t.tolist() == [1.0] and np.array_equal(last.q[0], full.q[-1])
    assert np.array_equal(last.lam[0], full.lam[-1])
    rec = linkdyn.simulate(jansen, 1.0, rtol=1e-8, atol=1e-8, t_out="final",
                           record=linkdyn.Record(markers="foot"))
    assert np.array_equal(rec.marker("foot"), full.marker("foot")[-1:])
    assert last.stats["output_rows"] == 1 and last.stats["steps"] == full.stats["steps"]


def test_event_rows_hold_the_consistent_state_at_each_event():
    b = linkdyn.ModelBuilder("pendulum", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=2.0, position=(0.5 * math.sin(2.0), -0.5 * math.cos(2.0)),
              angle=2.0 - math.pi / 2)
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_marker("tip", "rod.b")
    model = b.build()
    crossing = [ev.marker_crosses("tip", "x", 0.0, terminal=False)]
    r = linkdyn.simulate(model, 3.0, rtol=1e-10, atol=1e-10, t_out="events", events=crossing)
    times = [e.t for e in r.events]
    period = 4 * ellipk(math.sin(1.0) ** 2) / math.sqrt(9.81 / (2.0 / 3.0))
    np.testing.assert_allclose(times, period * np.array([0.25, 0.75, 1.25]), atol=1e-8)
    np.testing.assert_array_equal(r.t, [0.0, *times, 3.0])
    assert np.abs(r.marker("tip")[1:-1, 0]).max() < 1e-9          # at the crossings
    # The integrator's state there: on the constraints to the integration's accuracy.
    assert r.phi_norm.max() < 1e-11 and r.phid_norm.max() < 1e-7
    # Energy is conserved through the recorded event rows.
    assert np.ptp(r.energy) < 1e-7
    rec = linkdyn.simulate(model, 3.0, rtol=1e-10, atol=1e-10, t_out="events",
                           events=crossing, record=linkdyn.Record(markers="tip"))
    assert np.array_equal(rec.t, r.t) and np.array_equal(rec.marker("tip"), r.marker("tip"))


def test_a_terminal_event_ends_a_recorded_run_at_the_event():
    b = linkdyn.ModelBuilder("fall", gravity=(0.0, -9.81))
    b.add_body("ball", mass=1.0, inertia=0.01, position=(0.0, 2.0), velocity=(0.3, 0.0))
    b.add_marker("centre", "ball.cm")
    r = linkdyn.simulate(b.build(), 5.0, rtol=1e-10, atol=1e-10, dt_out=0.1,
                         events=[ev.marker_crosses("centre", "y", 0.0, direction=-1)],
                         record=linkdyn.Record(markers="centre"))
    t_hit = math.sqrt(2 * 2.0 / 9.81)
    assert r.status == "event" and abs(r.t[-1] - t_hit) < 1e-11
    assert abs(r.marker("centre")[-1, 1]) < 1e-10 and np.all(np.diff(r.t) > 0)


def test_unrecorded_series_and_bad_records_raise(jansen):
    r = linkdyn.simulate(jansen, 0.2, record=linkdyn.Record(markers="P3"))
    for ask in (lambda: r.marker("foot"), lambda: r.body_angle("L1"), lambda: r.energy,
                lambda: r.marker_acceleration("P3"), lambda: r.a, lambda: r.to_dataframe()):
        with pytest.raises(linkdyn.NotRecordedError, match="was not recorded.*marker\\('P3'\\)"):
            ask()
    with pytest.raises(ValueError, match="Record.markers: model 'jansen' has no marker 'P9'"):
        linkdyn.simulate(jansen, 0.2, record=linkdyn.Record(markers=["P9"]))
    with pytest.raises(ValueError, match="Record.joints: .* no joint 'J99'"):
        linkdyn.simulate(jansen, 0.2, record=linkdyn.Record(joints="J99"))
    with pytest.raises(ValueError, match="unknown invariant 'momentum'"):
        linkdyn.Record(invariants=["momentum"])
    with pytest.raises(TypeError, match="names are strings"):
        linkdyn.Record(bodies=[1])
    with pytest.raises(TypeError, match="record must be a linkdyn.Record"):
        linkdyn.simulate(jansen, 0.2, record={"markers": ["P3"]})
    with pytest.raises(ValueError, match="t_out must be an array of times, 'final' or"):
        linkdyn.simulate(jansen, 0.2, t_out="last")
    with pytest.raises(ValueError, match="give t_out or dt_out"):
        linkdyn.simulate(jansen, 0.2, t_out="final", dt_out=0.1)


def test_the_size_estimate_counts_what_is_kept():
    model = linkdyn.chain(2_000)
    width = 2 * model.nq + model.nc                       # 22,000 numbers a whole row
    # 10^7 whole rows would take 1.6 TiB: refused before any work, with the estimate.
    with pytest.raises(ValueError, match="model 'chain2000': 10000002 output rows of 22000 "
                                         "values need 1.64e\\+03 GiB.*record=linkdyn."
                                         "Record\\(...\\) keeps named series"):
        linkdyn.simulate(model, 1.0, dt_out=1e-7)
    record = linkdyn.Record(markers="tip", invariants=["energy"])
    assert output.row_values(record.series(model), width) == 5
    assert output.row_values(None, width) == width
    # The same times with a Record pass the estimate (10^7 rows of 5 numbers, 0.4 GB).
    output.check_size(10**7 + 2, record.series(model), width, "test")


def test_output_time_is_reported_apart_from_integration(jansen):
    r = linkdyn.simulate(jansen, 2.0, rtol=1e-8, atol=1e-8, dt_out=1e-3)
    few = linkdyn.simulate(jansen, 2.0, rtol=1e-8, atol=1e-8, t_out="final")
    assert r.stats["output_rows"] == 2001 and few.stats["output_rows"] == 1
    assert r.stats["output_seconds"] > 0 and r.stats["integration_seconds"] > 0
    # The integration did the same work whatever the output.
    assert r.stats["steps"] == few.stats["steps"]
    assert r.stats["factorizations"] == few.stats["factorizations"]


def test_recorded_results_pickle(jansen):
    r = linkdyn.simulate(jansen, 0.5, record=linkdyn.Record(markers="foot",
                                                            invariants=["energy"]))
    back = pickle.loads(pickle.dumps(r))
    assert np.array_equal(back.marker("foot"), r.marker("foot"))
    assert np.array_equal(back.energy, r.energy)


def test_models_and_results_summarise_themselves_in_a_notebook():
    import linkdyn as ld

    model = ld.load_model("jansen")
    html = model._repr_html_()
    assert "linkdyn model jansen (planar)" in html and "11: L1, L2" in html
    assert "44, 43" in html and "kinematic only</th><td style='text-align:left'>no" in html
    r = ld.simulate(model, 0.1, dt_out=0.05)
    html = r._repr_html_()
    assert "success" in html and "3 output rows" in html and "energy variation" in html
    k = ld.kinematics("stephenson2", np.linspace(0.0, 0.2, 5))
    html = k._repr_html_()
    assert "5 positions" in html and "smallest reciprocal condition" in html
    # Names are escaped: a model named like markup stays text.
    b = ld.ModelBuilder("<b>x</b>")
    b.add_body("m", mass=1.0, inertia=1.0)
    assert "&lt;b&gt;x&lt;/b&gt;" in b.build()._repr_html_()


def test_models_and_results_print_as_one_line_summaries():
    """A result's repr is one line that says what it holds: the dataclasses' default reprs
    printed every array (a heavy top's simulation sensitivities over 0.5 s: 68 kB), and a
    model of one body read "1 bodies, 1 joints"."""
    top = linkdyn.load_model("heavy_top")
    assert repr(top) == ("<linkdyn.SpatialModel 'heavy_top': 1 body, 1 joint, "
                         "12 coordinates, 9 constraints>")
    r = linkdyn.simulate(top, 0.1, dt_out=0.01)
    assert repr(r) == (f"<SimulationResult 'heavy_top': 11 rows, t = 0 to 0.1 s, success, "
                       f"{r.stats['steps']} steps, 0 events>")
    final = linkdyn.simulate(top, 0.1, t_out="final")
    assert repr(final).startswith("<SimulationResult 'heavy_top': 1 row, t = 0.1 s, success, ")
    model = linkdyn.load_model("crank_rocker")
    k = linkdyn.kinematics(model, np.linspace(0.0, 2.0 * np.pi, 361))
    assert repr(k) == ("<KinematicsResult 'crank_rocker': 361 rows, t = 0 to 6.28319 s, "
                       "success, 0 singularities, 0 limit positions>")
    s = linkdyn.kinematic_sensitivities(model, ["ground.A.x", "ground.A.y", "ground.D.x",
                                                "ground.D.y"], k.t[:3])
    assert repr(s).startswith("<KinematicSensitivities 'crank_rocker': 3 rows, t = 0 to ")
    assert repr(s).endswith("4 parameters (ground.A.x, ground.A.y, ground.D.x, ...), "
                            "4 exact>")
    metrics = linkdyn.design.cycle_metrics(k)
    assert repr(metrics).startswith("<CycleMetrics 'crank_rocker': 361 rows, "
                                    "t = 0 to 6.28319 s, transmission at 2 joints, ")
    assert repr(next(iter(metrics.curves.values()))).startswith("<CouplerCurve: 361 points, ")
    pendulum = linkdyn.load_model("spatial_double_pendulum")
    modes = linkdyn.modes(pendulum)
    assert repr(modes) == (f"<Modes 'spatial_double_pendulum': 6 modes, "
                           f"{modes.frequencies[0]:.6g} to {modes.frequencies[-1]:.6g} rad/s>")
    rest = linkdyn.equilibrium(pendulum)
    assert repr(rest) == (f"<Equilibrium 'spatial_double_pendulum': newton, residual "
                          f"{rest.residual:.1e}, {'stable' if rest.stable else 'neutral'}, "
                          f"potential energy {rest.potential_energy:.6g} J>")
    estimate = linkdyn.estimate_error(top, 0.05, dt_out=0.01)
    assert repr(estimate) == ("<ErrorEstimate 'heavy_top': 6 rows, t = 0 to 0.05 s, success, "
                              "reference 100 times tighter>")
    sens = linkdyn.simulation_sensitivities(top, ["bodies.top.mass"], 0.05, dt_out=0.01)
    assert repr(sens) == ("<SimulationSensitivities 'heavy_top': 6 rows, t = 0 to 0.05 s, "
                          "1 parameter (bodies.top.mass), 1 exact>")
