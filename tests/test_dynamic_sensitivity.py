"""Forward sensitivities of simulations (linkdyn.design.dynamic_sensitivity, csrc/ld_sens.c):
a spring-mass oscillator's closed form differentiated by hand (stiffness, mass, initial
position), the Jansen linkage against Richardson-extrapolated differences of whole
simulations (a link length, which enters non-affinely, and a density), convergence with the
tolerance, and what is refused."""
import math
import os

import numpy as np
import pytest

import linkdyn
from linkdyn.design.sensitivity import ParameterFamily
from linkdyn.errors import ArgumentError, ArgumentTypeError

K, M, X0 = 40.0, 2.0, 0.3
OMEGA = math.sqrt(K / M)


def oscillator():
    """A mass on a rail held by a spring of free length 0 to the origin: x = x0 cos(w t)."""
    b = linkdyn.ModelBuilder("oscillator", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("Z", (1.0, 1.0))            # enters nothing
    b.add_body("mass", mass=M, inertia=0.1, position=(X0, 0.0))
    b.add_prismatic("rail", "ground.O", "mass.cm")
    b.add_spring_damper("spring", "ground.O", "mass.cm", K, 0.0, 0.0)
    b.add_marker("P", "mass.cm")
    return b.build()


PARAMS = ["forces.spring.stiffness", "bodies.mass.mass", "bodies.mass.position.x"]


def closed_form(t):
    """d x / d(k, m, x0) of x = x0 cos(w t), w = sqrt(k / m), by hand."""
    dx_dw = -X0 * t * np.sin(OMEGA * t)
    return np.column_stack([dx_dw * 0.5 / math.sqrt(K * M), dx_dw * (-0.5 * OMEGA / M),
                            np.cos(OMEGA * t)])


def closed_form_velocity(t):
    """d v / d(k, m, x0) of v = -x0 w sin(w t)."""
    dv_dw = -X0 * (np.sin(OMEGA * t) + OMEGA * t * np.cos(OMEGA * t))
    return np.column_stack([dv_dw * 0.5 / math.sqrt(K * M), dv_dw * (-0.5 * OMEGA / M),
                            -OMEGA * np.sin(OMEGA * t)])


@pytest.fixture(scope="module")
def runs():
    return {tol: linkdyn.simulation_sensitivities(oscillator(), PARAMS, 2.0, rtol=tol,
                                                  atol=tol)
            for tol in (1e-7, 1e-9, 1e-11)}


def test_oscillator_against_closed_form(runs):
    errors = []
    for tol, s in runs.items():
        assert s.exact == (True, True, True)
        x = s.marker("P")[:, 0, :]
        v = s.marker_velocity("P")[:, 0, :]
        e = np.abs(x - closed_form(s.t)).max(axis=0)
        ev = np.abs(v - closed_form_velocity(s.t)).max(axis=0)
        # The state's own error at these tolerances is up to ~60 tol; the derivatives follow
        # it, scaled by their size (up to 4.5 m per unit of the parameter, 20 m/s).
        assert np.all(e <= 1e3 * tol * np.maximum(1.0, np.abs(closed_form(s.t)).max(axis=0)))
        assert np.all(ev <= 1e3 * tol * np.maximum(1.0, np.abs(
            closed_form_velocity(s.t)).max(axis=0)))
        errors.append(e)
    # They converge with the tolerance: two decades per two decades (measured ~117x), not
    # stuck at a floor.
    assert np.all(errors[0] > 10 * errors[1]) and np.all(errors[1] > 10 * errors[2])


def test_events_restart_the_sensitivities_unchanged():
    """Non-terminal events (the mass crossing x = 0.1, three times) restart the integrator, and
    the sensitivities with it: the closed form holds across them as without."""
    crossing = linkdyn.events.marker_crosses("P", "x", 0.1, terminal=False)
    s = linkdyn.simulation_sensitivities(oscillator(), PARAMS, 2.0, rtol=1e-9, atol=1e-9,
                                         events=[crossing])
    assert len(s.result.events) == 3 and s.result.stats["restarts"] == 3
    x = s.marker("P")[:, 0, :]
    err = np.abs(x - closed_form(s.t)).max(axis=0)
    assert np.all(err <= 1e3 * 1e-9 * np.maximum(1.0, np.abs(closed_form(s.t)).max(axis=0)))


K_C, N_C, V0_C, H_C, R_C = 1e4, 1.5, 1.0, 0.3, 0.1


def dropped_disk(**contact):
    """A disk moving down at V0_C onto a compliant floor, without gravity: the contact lasts
    t_c = 2 (d_max / v0) B(1/a, 1/2) / a, a = n + 1, d_max = (a m v0^2 / (2 K))^(1/a) (the
    energy integral), so t_c scales like (m / K)^(1/a) and after it the disk moves up at v0:
    its height's derivatives are v0 t_c / (a K) and -v0 t_c / (a m)."""
    contact = {"stiffness": K_C, "exponent": N_C, **contact}
    b = linkdyn.ModelBuilder("drop", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("disk", mass=1.0, inertia=0.5 * R_C**2, position=(0.0, H_C),
               velocity=(0.0, -V0_C))
    b.add_contact("floor", "disk.cm", "ground.O", 0.0, R_C, **contact)
    b.add_marker("centre", "disk.cm")
    return b.build()


def test_compliant_impact_in_closed_form():
    from scipy.special import beta

    a = N_C + 1
    d_max = (a * V0_C**2 / (2 * K_C)) ** (1 / a)
    t_c = 2 * d_max / V0_C * beta(1 / a, 0.5) / a
    t_end = (H_C - R_C) / V0_C + t_c + 0.05
    want = np.array([V0_C * t_c / (a * K_C), -V0_C * t_c / a])
    errors = []
    for tol in (1e-10, 1e-11):
        s = linkdyn.simulation_sensitivities(
            dropped_disk(), ["contacts.floor.stiffness", "bodies.disk.mass"], t_end,
            rtol=tol, atol=tol, t_out=[0.0, t_end])
        assert [e.name for e in s.result.events] == ["floor", "floor"]
        assert s.exact == (False, True) and s.result.stats["sensitivity_error_control"]
        errors.append(np.abs(s.marker("centre")[-1, 1] / want - 1.0).max())
    # measured 1.3e-6 and 9.2e-8 (the state's own error here: 2.2e-8 and 2.2e-9 m)
    assert errors[0] < 1e-5 and errors[1] < 1e-6


def test_period_sensitivities_of_a_pendulum():
    """IFToMM A01 from rest at the horizontal to the bottom, a terminal event: a quarter of
    its period, t_b = K(1/2) / w with w^2 = m g L / (I + m L^2). Its derivatives with
    respect to gravity (t_b ~ |g|^(-1/2)) and the pin's place (L) by hand, against
    ``event_time``: the period's derivatives are four times these."""
    from scipy.special import ellipk

    from linkdyn.models import simple_pendulum
    from linkdyn.models.iftomm import LUMP_INERTIA

    g, L, inertia = 9.81, 1.0, LUMP_INERTIA
    w2 = g * L / (inertia + L * L)
    t_b = ellipk(0.5) / math.sqrt(w2)
    dt_dL = -0.5 * ellipk(0.5) * w2**-1.5 * g * (inertia - L * L) / (inertia + L * L)**2
    want = np.array([t_b / (2 * g), -dt_dL])     # gravity.1 = -g; pin.x = -L
    bottom = linkdyn.events.marker_crosses("P1", "x", 0.0, direction=-1)
    errors = []
    for tol in (1e-8, 1e-10):
        s = linkdyn.simulation_sensitivities(simple_pendulum(),
                                             ["gravity.1", "bodies.lump.points.pin.x"], 2.0,
                                             rtol=tol, atol=tol, events=[bottom])
        assert s.result.status == "event" and abs(s.result.t[-1] - t_b) < 1e3 * tol
        errors.append(np.abs(s.event_time / want - 1.0).max())
    # measured 7.6e-8 and 7.5e-10: proportional to the tolerance
    assert errors[0] < 1e-6 and errors[1] < 1e-8
    assert s.event_time is not None and linkdyn.simulation_sensitivities(
        oscillator(), PARAMS[:1], 0.1).event_time is None


def test_initial_sensitivities_and_state(runs):
    s = runs[1e-9]
    assert np.allclose(s.dq[0, :, 2], np.eye(s.model.nq)[0], atol=1e-12)   # dx0/dx0 = 1
    assert np.abs(s.dq[0, :, :2]).max() == 0.0 and np.abs(s.dv[0]).max() < 1e-12
    # the state is the simulation's: within tolerance of a plain BDF run
    plain = linkdyn.simulate(oscillator(), 2.0, rtol=1e-9, atol=1e-9, method="bdf",
                             t_out=s.t)
    assert np.abs(plain.q - s.q).max() < 1e-7
    assert s.result.stats["steps"] > 0 and s.parameters == tuple(PARAMS)


@pytest.fixture(scope="module")
def jansen_reference():
    """Richardson-extrapolated central differences of whole simulations (the explicit method
    at 1e-13) of the Jansen linkage, 0.5 s: d q / d(L5 length, L2 density)."""
    model = linkdyn.load_model("jansen")
    names = ["bodies.L5.length", "bodies.L2.density"]
    family = ParameterFamily(model, names)
    t = np.linspace(0.0, 0.5, 51)
    ref = []
    for j, h in enumerate((2e-5, 1e-3)):
        def q(step):
            return linkdyn.simulate(family.shifted(j, step), 0.5, rtol=1e-13, atol=1e-13,
                                    t_out=t, method="rk").q
        d1 = (q(h) - q(-h)) / (2 * h)
        d2 = (q(h / 2) - q(-h / 2)) / h
        ref.append((4 * d2 - d1) / 3)
    return model, names, t, np.stack(ref, axis=-1)


def test_jansen_against_differences_of_simulations(jansen_reference):
    model, names, t, ref = jansen_reference
    s = linkdyn.simulation_sensitivities(model, names, 0.5, rtol=1e-11, atol=1e-11, t_out=t)
    assert s.exact == (False, True)     # a length moves the bars' inertia (L^3): not affine
    scale = np.abs(ref).max(axis=(0, 1))
    err = np.abs(s.dq - ref).max(axis=(0, 1))
    # measured 7e-10 and 1.5e-9 of the scale (the state's own error at 1e-11 is ~1e-9 m)
    assert np.all(err <= 2e-8 * scale), (err, scale)
    # markers: the foot on L5's end moves with its length at fixed coordinates too
    foot = s.marker("foot")
    i = model.marker_index("foot")
    family = ParameterFamily(model, names[:1])
    h = 1e-6
    fd_local = (family.shifted(0, h).marker_positions(s.q)[:, i]
                - family.shifted(0, -h).marker_positions(s.q)[:, i]) / (2 * h)
    direct = np.einsum("ndk,nk->nd", np.moveaxis(
        model.marker_positions(np.eye(model.nq))[:, i] - model.marker_positions(
            np.zeros(model.nq))[i], 0, -1)[None], s.dq[:, :, 0])
    assert np.abs(foot[:, :, 0] - (direct + fd_local)).max() < 1e-6 * np.abs(foot).max()


def test_refusals():
    m = oscillator()
    with pytest.raises(ArgumentError, match="'ground.Z.x'"):
        linkdyn.simulation_sensitivities(m, ["ground.Z.x"], 0.1)
    with pytest.raises(ArgumentError, match="method"):
        linkdyn.simulation_sensitivities(m, PARAMS[:1], 0.1, method="rk")
    with pytest.raises(ArgumentError, match="terminal on a force element"):
        linkdyn.simulation_sensitivities(
            m, PARAMS[:1], 0.1,
            events=[linkdyn.events.coordinate_crosses("spring", 0.2, terminal=True)])
    with pytest.raises(ArgumentError, match="'controller'"):
        linkdyn.simulation_sensitivities(m, PARAMS[:1], 0.1, controller=lambda t, s: {},
                                         control_period=0.01)
    with pytest.raises(ArgumentTypeError, match="'tolerance'"):
        linkdyn.simulation_sensitivities(m, PARAMS[:1], 0.1, tolerance=1e-8)
    # a string was taken for True
    with pytest.raises(ArgumentTypeError, match="error_control must be True or False"):
        linkdyn.simulation_sensitivities(m, PARAMS[:1], 0.1, error_control="no")
    with pytest.raises(ArgumentError, match="friction"):
        linkdyn.simulation_sensitivities("walker_gait1", ["gravity.1"], 0.1)
    with pytest.raises(ArgumentError, match="Lankarani-Nikravesh"):
        linkdyn.simulation_sensitivities(
            dropped_disk(model="lankarani_nikravesh", restitution=0.9),
            ["contacts.floor.stiffness"], 0.1)


def test_spatial_heavy_top_against_differences_of_simulations():
    """The spinning top (natural coordinates) against Richardson-extrapolated differences
    of whole simulations at 1e-13, 0.5 s: gravity and the mass enter affinely."""
    model = linkdyn.load_model("heavy_top")
    names = ["gravity.2", "bodies.top.mass"]
    t = np.linspace(0.0, 0.5, 51)
    s = linkdyn.simulation_sensitivities(model, names, 0.5, rtol=1e-11, atol=1e-11, t_out=t)
    assert s.exact == (True, True)
    family = ParameterFamily(model, names)
    for j in range(2):
        h = 3e-3 * max(1.0, abs(family.values[j]))

        def q(step):
            return linkdyn.simulate(family.shifted(j, step), 0.5, rtol=1e-13, atol=1e-13,
                                    t_out=t, method="rk").q
        d1 = (q(h) - q(-h)) / (2 * h)
        d2 = (q(h / 2) - q(-h / 2)) / h
        ref = (4 * d2 - d1) / 3
        # measured 1.0e-8 and 1.2e-8 of the scale (the top spins at 50 rad/s)
        assert np.abs(s.dq[:, :, j] - ref).max() < 1e-7 * np.abs(ref).max()
    tip = s.marker("tip")
    assert tip.shape == (51, 3, 2) and np.abs(tip[0]).max() == 0.0


def test_a_member_whose_jacobian_pattern_differs():
    """Moving the spatial slider-crank's crank point o off the crank's axis (its y is 0)
    gives the members Phi_q entries the model's pattern leaves out; the sensitivities
    evaluate each member in its own pattern (they were refused as invalid integrator
    options). Against Richardson-extrapolated differences of whole simulations at 1e-13:
    measured 3e-10 of the scale, and the kinematic sensitivities agree with both."""
    from linkdyn.models.spatial import spatial_slider_crank

    names = ["bodies.crank.points.o.y"]
    t = np.linspace(0.0, 0.5, 26)
    family = ParameterFamily(spatial_slider_crank(), names)
    assert family.shifted(0, 1e-3).kernels.phiq_nnz > family.base.kernels.phiq_nnz
    s = linkdyn.simulation_sensitivities(family.base, names, 0.5, rtol=1e-11, atol=1e-11,
                                         t_out=t)
    h = 3e-3

    def q(step):
        return linkdyn.simulate(family.shifted(0, step), 0.5, rtol=1e-13, atol=1e-13,
                                t_out=t, method="rk").q
    ref = (4 * (q(h / 2) - q(-h / 2)) / h - (q(h) - q(-h)) / (2 * h)) / 3
    assert np.abs(s.dq[:, :, 0] - ref).max() < 1e-7 * np.abs(ref).max()
    k = linkdyn.kinematic_sensitivities(family.base, names, t)
    assert np.abs(k.dq[:, :, 0] - ref).max() < 1e-7 * np.abs(ref).max()


@pytest.mark.parametrize("model_name, names, t_end, h", [
    # the top's inertia tensor entries (two equal transverse moments: a change of one of
    # them used to reorder the principal axes the coordinates follow)
    ("heavy_top", ["bodies.top.inertia.z.z", "bodies.top.inertia.x.x"], 0.5, 1e-5),
    # flexible joints' rotors of equal axial and transverse inertia (the same reordering
    # made a member's coordinates mean other axes, and the run failed in its kernels)
    ("flexible_arm", ["forces.elbow_drive.rotor_inertia",
                      "forces.shoulder_drive.rotor_transverse_inertia"], 0.3, 1e-4),
])
def test_inertia_sensitivities_of_spatial_bodies(model_name, names, t_end, h):
    """Against Richardson-extrapolated differences of whole simulations at 1e-12 over
    steps h (the inertias are 0.002 to 0.02 kg m^2). Measured 9e-9, 7e-9, 5e-9 and 4e-9
    of the scale; at 1e-13, or with steps of 1e-5 on the arm, the differences' own
    rounding grows to some 1e-6 of the transverse inertia's small scale."""
    model = linkdyn.load_model(model_name)
    t = np.linspace(0.0, t_end, 31)
    s = linkdyn.simulation_sensitivities(model, names, t_end, rtol=1e-11, atol=1e-11,
                                         t_out=t)
    assert all(s.exact)                 # the mass matrix is affine in the inertias
    family = ParameterFamily(model, names)
    for j in range(len(names)):
        def q(step):
            return linkdyn.simulate(family.shifted(j, step), t_end, rtol=1e-12,
                                    atol=1e-12, t_out=t).q
        ref = (4 * (q(h / 2) - q(-h / 2)) / h - (q(h) - q(-h)) / (2 * h)) / 3
        assert np.abs(s.dq[:, :, j] - ref).max() < 1e-6 * np.abs(ref).max(), names[j]


def test_masses_move_a_start_assembled_from_guesses_off_the_constraints():
    """A box on a spherical pivot, given an angular velocity but no velocity of its centre:
    the assembly projects the guessed velocities onto the constraints with the mass matrix
    as the metric, so the start moves with the mass and the inertia. Before, their
    sensitivities took the start as fixed: 16 and 17% off, and called exact. Also a product
    of inertia (zero in these principal axes, set with its mirror), whose step was 1e-3
    kg m^2, most of the tensor (the member's mass lay on a plane and it was refused): now a
    thousandth of the tensor's largest entry. Against Richardson-extrapolated differences
    of whole simulations at 1e-12 (measured 4e-9, 2e-9 and 5e-8 of the scale)."""
    b = linkdyn.SpatialModelBuilder("box", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("box", mass=2.0, inertia=np.diag([0.010, 0.020, 0.026]),
               points={"o": (0.05, 0.02, 0.1), "tip": (-0.05, 0.03, -0.1)},
               position=(-0.05, -0.02, -0.1), angular_velocity=(1.0, 2.0, 3.0))
    b.add_spherical("pivot", "box.o", "ground.O")
    b.add_marker("tip", "box.tip")
    model = b.build()
    names = ["bodies.box.mass", "bodies.box.inertia.y.y", "bodies.box.inertia.x.y"]
    t = np.linspace(0.0, 0.5, 11)
    s = linkdyn.simulation_sensitivities(model, names, 0.5, rtol=1e-11, atol=1e-11,
                                         t_out=t)
    assert np.abs(s.dv[0, :, :2]).max() > 0.1     # the start moves with mass and inertia
    family = ParameterFamily(model, names)
    for j, h in enumerate((2e-4, 2e-6, 2e-6)):
        def tip(step):
            r = linkdyn.simulate(family.shifted(j, step), 0.5, rtol=1e-12, atol=1e-12,
                                 t_out=t)
            return r.marker("tip")
        ref = (4 * (tip(h / 2) - tip(-h / 2)) / h - (tip(h) - tip(-h)) / (2 * h)) / 3
        assert np.abs(s.marker("tip")[:, :, j] - ref).max() < 1e-6 * np.abs(ref).max(), \
            names[j]


def test_a_start_that_a_mass_does_not_move_takes_two_assemblies_not_four(monkeypatch):
    """The Jansen linkage's start is assembled from guesses 5e-6 off its constraints, in the
    mass matrix's metric, yet its densities do not move it: the starts assembled at
    p +- h are its own bit for bit, and the start's derivative is zero without the
    assemblies at p +- h/2 that Richardson's extrapolation would add. A length moves the
    start and is extrapolated over all four. The sensitivities are the same, bit for bit,
    as with every start extrapolated."""
    from linkdyn.design import dynamic_sensitivity as DS
    from linkdyn.design.sensitivity import _difference

    model = linkdyn.load_model("jansen")
    names = ["bodies.L5.length", "bodies.L3.density", "bodies.L7.density"]
    assembled = []
    assemble = DS.consistent_state
    monkeypatch.setattr(DS, "consistent_state",
                        lambda *a, **k: assembled.append(1) or assemble(*a, **k))
    fast = linkdyn.simulation_sensitivities(model, names, 0.2, rtol=1e-8, atol=1e-8)
    # the run's own start, then four for the length and two for each density
    assert len(assembled) == 1 + 4 + 2 + 2
    assert np.abs(fast.dq[0, :, 0]).max() > 0.1 and not np.any(fast.dq[0, :, 1:])
    monkeypatch.setattr(DS, "_start_derivative",
                        lambda start_of, h, own: _difference(start_of, h)[0])
    full = linkdyn.simulation_sensitivities(model, names, 0.2, rtol=1e-8, atol=1e-8)
    assert np.array_equal(fast.dq, full.dq) and np.array_equal(fast.dv, full.dv)


def test_a_frame_that_turns_under_a_small_change_is_refused_by_name():
    """A body whose inertia has two equal moments but is not given in principal axes: a
    change of one entry picks principal axes at a finite angle from the model's, so its
    members' coordinates would mean other axes. Refused, naming the body."""
    from scipy.spatial.transform import Rotation

    R = Rotation.from_rotvec([0.4, 0.1, -0.3]).as_matrix()
    b = linkdyn.SpatialModelBuilder("tilted", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("disk", mass=1.0, inertia=R @ np.diag([0.01, 0.01, 0.015]) @ R.T,
               points={"a": (0.0, 0.0, 0.1)}, position=(0.0, 0.0, -0.1))
    b.add_spherical("S", "disk.a", "ground.O")
    with pytest.raises(linkdyn.ModelError, match="principal axes of body 'disk'"):
        linkdyn.simulation_sensitivities(b.build(), ["bodies.disk.inertia.x.x"], 0.1)
    # a product of inertia of the symmetric top: the same, said of it
    with pytest.raises(linkdyn.ModelError, match="'bodies.top.inertia.x.y': a product of "
                       "inertia of body 'top', two of whose principal moments are equal"):
        linkdyn.simulation_sensitivities("heavy_top", ["bodies.top.inertia.x.y"], 0.1)


def test_sensitivities_on_the_states_steps():
    """error_control=False: the sensitivities follow the state's steps (fewer than with
    them in the error test) and still meet the closed form on this smooth motion."""
    tested = linkdyn.simulation_sensitivities(oscillator(), PARAMS, 2.0, rtol=1e-9, atol=1e-9)
    s = linkdyn.simulation_sensitivities(oscillator(), PARAMS, 2.0, rtol=1e-9, atol=1e-9,
                                         error_control=False)
    assert not s.result.stats["sensitivity_error_control"]
    assert s.result.stats["steps"] < tested.result.stats["steps"]
    x = s.marker("P")[:, 0, :]
    err = np.abs(x - closed_form(s.t)).max(axis=0)
    assert np.all(err <= 1e3 * 1e-9 * np.maximum(1.0, np.abs(closed_form(s.t)).max(axis=0)))


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_keeps_the_sensitivities_computed_so_far():
    from conftest import ctrl_c_after

    with ctrl_c_after(0.3) as caught:
        s = linkdyn.simulation_sensitivities(oscillator(), PARAMS, 1e4, rtol=1e-10,
                                             atol=1e-10, dt_out=0.01)
    assert s.result.status == "interrupted"
    assert any("interrupted" in str(w.message) for w in caught)
    n = len(s.t)
    assert 0 < n < 1_000_001 and s.dq.shape == (n, s.model.nq, 3)
    # what was computed is right: the closed form holds on the rows kept (the first 2 s, as
    # in the tests above; the error grows with time, like the state's)
    first = s.t <= 2.0
    x = s.marker("P")[first, 0, :]
    exact = closed_form(s.t[first])
    err = np.abs(x - exact).max(axis=0)
    assert s.t[-1] > 2.0 and np.all(err <= 1e3 * 1e-10 * np.maximum(1.0, np.abs(exact).max(axis=0)))
