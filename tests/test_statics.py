"""Static equilibrium and vibration modes (linkdyn.statics) against closed forms."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import linkdyn
from linkdyn import laws
from linkdyn.errors import EquilibriumError


def spring_chain(n, k=100.0, m=0.5, gravity=(0.0, -9.81)):
    """n masses on a horizontal rail, springs ground-m1-m2-...-mn (fixed-free)."""
    b = linkdyn.ModelBuilder(f"spring_chain{n}", gravity=gravity)
    b.add_ground_point("O", (0.0, 0.0))
    for i in range(n):
        b.add_body(f"m{i}", mass=m, inertia=0.01, position=(1.0 + i + 0.05 * i, 0.0))
        b.add_prismatic(f"rail{i}", "ground.O", f"m{i}.cm")
        b.add_spring_damper(f"k{i}", "ground.O" if i == 0 else f"m{i - 1}.cm", f"m{i}.cm",
                            k, 0.0, 1.0)
    return b.build()


def test_spring_chain_equilibrium_and_frequencies():
    n, k, m = 5, 100.0, 0.5
    model = spring_chain(n, k, m)
    eq = linkdyn.equilibrium(model)
    x = eq.q[0::4]
    np.testing.assert_allclose(x, 1.0 + np.arange(n), atol=1e-10)   # every spring relaxed
    assert eq.stable is True
    md = linkdyn.modes(model, eq)
    exact = 2 * math.sqrt(k / m) * np.sin((2 * np.arange(1, n + 1) - 1) * math.pi
                                          / (2 * (2 * n + 1)))
    np.testing.assert_allclose(md.frequencies, exact, rtol=1e-10)
    np.testing.assert_allclose(md.damping_ratios, 0.0, atol=1e-12)
    # Mode shapes: mass-normalised, on the rail (only x moves), satisfying Phi_q dq = 0.
    J = model.phi_q(eq.q).toarray()
    assert np.abs(J @ md.shapes).max() < 1e-10
    np.testing.assert_allclose(np.einsum("ik,i,ik->k", md.shapes, model.mass, md.shapes), 1.0)
    first = md.shapes[0::4, 0]
    assert np.all(np.sign(first) == np.sign(first[0]))   # the fundamental: all in phase


def test_damped_chain_damping_ratio():
    k, c, m = 100.0, 2.0, 0.5
    b = linkdyn.ModelBuilder("damped", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("m", mass=m, inertia=0.01, position=(1.0, 0.0))
    b.add_prismatic("rail", "ground.O", "m.cm")
    b.add_spring_damper("k", "ground.O", "m.cm", k, c, 1.0)
    md = linkdyn.modes(b.build())
    np.testing.assert_allclose(md.frequencies, [math.sqrt(k / m)], rtol=1e-12)
    np.testing.assert_allclose(md.damping_ratios, [c / (2 * math.sqrt(k * m))], rtol=1e-12)


def torsion_pendulum(k, rest=0.0, angle=-0.3):
    b = linkdyn.ModelBuilder("torsion", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=2.0, position=(0.5 * math.cos(angle),
                                                      0.5 * math.sin(angle)), angle=angle)
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_torsional_spring_damper("spring", "pin", k, 0.0, rest)
    return b.build()


def test_pendulum_with_torsional_spring():
    # Torque -k theta - m g c cos theta = 0 at equilibrium; stiffness k - m g c sin theta.
    k, m, g, c, L = 20.0, 2.0, 9.81, 0.5, 1.0
    model = torsion_pendulum(k)
    eq = linkdyn.equilibrium(model)
    theta = brentq(lambda th: -k * th - m * g * c * math.cos(th), -math.pi / 2, 0.0)
    assert abs(math.atan2(eq.q[3], eq.q[2]) - theta) < 1e-12
    np.testing.assert_allclose(eq.joint_force("pin"), [0.0, -m * g], atol=1e-9)  # on ground
    assert eq.stable is True
    md = linkdyn.modes(model, eq)
    omega = math.sqrt((k - m * g * c * math.sin(theta)) / (m * L * L / 3))
    np.testing.assert_allclose(md.frequencies, [omega], rtol=1e-10)


def test_inverted_pendulum_is_unstable():
    # Upright, held by a spring too weak for gravity: an equilibrium, but unstable.
    model = torsion_pendulum(5.0, rest=math.pi / 2, angle=math.pi / 2 - 0.01)
    eq = linkdyn.equilibrium(model)
    assert abs(math.atan2(eq.q[3], eq.q[2]) - math.pi / 2) < 1e-10
    assert eq.stable is False and eq.stiffness_eigenvalues[0] < 0
    md = linkdyn.modes(model, eq)
    assert md.damping_ratios[0] == pytest.approx(-1.0)   # a real positive root: divergence
    np.testing.assert_allclose(md.eigenvalues[0].real,
                               math.sqrt((2 * 9.81 * 0.5 - 5.0) / (2.0 / 3.0)), rtol=1e-10)


def test_no_equilibrium_raises():
    # A block on a horizontal rail pushed along it: nothing holds it.
    b = linkdyn.ModelBuilder("pushed", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=1.0, inertia=0.1, position=(0.5, 0.0))
    b.add_prismatic("rail", "ground.O", "block.cm")
    b.add_force("push", "block.cm", 1.0, 0.0)
    with pytest.raises(EquilibriumError, match="pushed"):
        linkdyn.equilibrium(b.build())


def test_equilibrium_is_where_a_damped_simulation_settles():
    b = linkdyn.ModelBuilder("hanging", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("upper", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_bar("lower", length=1.0, mass=1.0, position=(1.5, 0.0))
    b.add_revolute("shoulder", "ground.O", "upper.a")
    b.add_revolute("elbow", "upper.b", "lower.a")
    b.add_torsional_spring_damper("s1", "shoulder", 30.0, 2.0, 0.0)
    b.add_torsional_spring_damper("s2", "elbow", 15.0, 1.0, 0.0)
    b.add_torque("tq", "lower", laws.constant(1.0))
    model = b.build()
    eq = linkdyn.equilibrium(model)
    md = linkdyn.modes(model, eq)
    assert np.all(md.damping_ratios > 0) and len(md.frequencies) == 2
    # Long enough for the slowest mode to decay by e^-25.
    slowest = float(np.min(-md.eigenvalues.real))
    r = linkdyn.simulate(model, 25.0 / slowest, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(r.q[-1], eq.q, atol=1e-8)


def test_modes_about_a_moving_state_with_velocity():
    model = torsion_pendulum(20.0)
    eq = linkdyn.equilibrium(model)
    md = linkdyn.modes(model, (eq.q, np.zeros(model.nq)))
    np.testing.assert_allclose(md.frequencies, linkdyn.modes(model, eq).frequencies,
                               rtol=1e-9)
    with pytest.raises(ValueError, match="pair"):
        linkdyn.modes(model, "upright")


def test_modes_of_a_free_body_on_a_spring_damper_in_space():
    """A spatial body hanging from a ground point on a spring-damper (k = 200 N/m, c = 4
    N s/m, m = 2 kg, free length 0.9 m): the bounce at sqrt(k / m) = 10 rad/s with damping
    ratio c / (2 sqrt(k m)) = 0.1, two swings at sqrt(g / L), L the stretched length
    (undamped: the damper acts along the spring), and free spins. The spins, s = 0 in
    rounding noise, had damping ratios of +1 and -1 (an unstable-looking mode); they are
    now frequency 0, ratio 0."""
    b = linkdyn.SpatialModelBuilder("bob", gravity=(0.0, 0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    b.add_body("bob", mass=2.0, inertia=(0.01, 0.012, 0.014), position=(0.0, 0.0, -1.0))
    b.add_spring_damper("s", "bob.cm", "ground.O", stiffness=200.0, damping=4.0,
                        free_length=0.9)
    m = linkdyn.modes(b.build())
    moving = m.frequencies > 0
    swing = math.sqrt(9.81 / (0.9 + 2.0 * 9.81 / 200.0))
    np.testing.assert_allclose(m.frequencies[moving], [swing, swing, 10.0], rtol=1e-9)
    np.testing.assert_allclose(m.damping_ratios[moving], [0.0, 0.0, 0.1], atol=1e-9)
    assert np.all(m.damping_ratios[~moving] == 0.0) and (~moving).sum() >= 3


def test_reactions_of_a_block_held_on_an_inclined_rail():
    # A block of mass m on a rail through O at angle a, held by a spring along the rail: the
    # rail carries the weight's normal part, m g cos(a), and the moment of the weight about
    # O, m g d cos(a) at distance d; the spring the part along the rail, m g sin(a).
    m, g, a, k = 2.0, 9.81, 0.4, 500.0
    b = linkdyn.ModelBuilder("incline", gravity=(0.0, -g))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=m, inertia=0.05, position=(math.cos(a), math.sin(a)), angle=a)
    b.add_prismatic("rail", "ground.O", "block.cm", axis=a)
    b.add_spring_damper("spring", "ground.O", "block.cm", k, 0.0, 1.0)
    eq = linkdyn.equilibrium(b.build())
    d = 1.0 - m * g * math.sin(a) / k                  # the spring's compression
    np.testing.assert_allclose(eq.q[:2], d * np.array([math.cos(a), math.sin(a)]), atol=1e-12)
    normal = np.array([-math.sin(a), math.cos(a)])
    # On the first body (the ground): the opposite of what the block receives.
    np.testing.assert_allclose(eq.joint_force("rail"), -m * g * math.cos(a) * normal,
                               atol=1e-9)
    assert abs(eq.joint_moment("rail") + m * g * d * math.cos(a)) < 1e-9
    with pytest.raises(linkdyn.UnknownNameError, match="joints: rail"):
        eq.joint_force("nope")


def test_redundant_rows_are_refused_by_name_or_allowed():
    # A bar pinned to the ground at both ends: 4 coordinates, 5 rows of rank 4. Its modes
    # about a given state need the multipliers of a singular system: refused with the
    # documented error (it was SciPy's RuntimeError), or with redundant="allow" the
    # least-norm multipliers and no mode (nothing can move).
    b = linkdyn.ModelBuilder("pinned_twice")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("D", (1.0, 0.0))
    b.add_bar("bar", length=1.0, density=1.0, position=(0.5, 0.0), angle=0.0)
    b.add_revolute("J1", "bar.a", "ground.O")
    b.add_revolute("J2", "bar.b", "ground.D")
    model = b.build()
    state = (model.q0, np.zeros(model.nq))
    with pytest.raises(linkdyn.RedundantConstraintsError, match='redundant="allow"'):
        linkdyn.modes(model, state=state)
    assert linkdyn.modes(model, state=state, redundant="allow").frequencies.size == 0
    with pytest.raises(linkdyn.RedundantConstraintsError):
        linkdyn.equilibrium(model)
    eq = linkdyn.equilibrium(model, redundant="allow")
    # together the pins hold the bar's weight (1 kg/m x 1 m x 9.81 m/s^2)
    np.testing.assert_allclose(sum(eq.joint_force(j)[1] for j in ("J1", "J2")), 9.81,
                               rtol=1e-10)


def test_joint_reactions_of_a_hanging_spatial_pendulum_carry_the_weight_below():
    """The spatial double pendulum at rest, hanging: each spherical joint holds up the
    weight of the bars below it, (0, 0, m g) for the lower and (0, 0, 2 m g) for the upper
    (1 kg bars), with no moment (a spherical joint transmits none). Equilibrium's
    joint_force returned the first two rows' multipliers, (0, 0): the z row was left out."""
    model = linkdyn.load_model("spatial_double_pendulum")
    e = linkdyn.equilibrium(model)
    g = 9.81
    np.testing.assert_allclose(e.joint_force("S2"), [0.0, 0.0, g], atol=1e-9)
    np.testing.assert_allclose(e.joint_force("S1"), [0.0, 0.0, 2 * g], atol=1e-9)
    for joint in ("S1", "S2"):
        assert e.joint_moment(joint).shape == (3,)
        np.testing.assert_allclose(e.joint_moment(joint), 0.0, atol=1e-9)


def test_an_equilibrium_far_from_the_guess_is_found_by_releasing_the_mechanism():
    """The flyball governor (IFToMM A05) starts with its rods 30 degrees below the horizontal
    and the springs at their rest length: its equilibrium is a metre away, rods hanging, and
    Newton's method from the start does not reach it (release=False). Released, with kinetic
    damping, it comes to rest there, and the closed form holds: the balls straight below the
    hinges at (+-0.05, 0, 0), the slider hanging on the two vertical springs, m g / (2 K)
    below the rods' middles' level less their rest length, z = -1.84e-5 m."""
    from linkdyn.models.spatial import FLYBALL

    model = linkdyn.load_model("flyball_governor")
    with pytest.raises(EquilibriumError, match="no static equilibrium found near the guess"):
        linkdyn.equilibrium(model, release=False)
    e = linkdyn.equilibrium(model)
    assert e.method == "release" and e.restarts >= 1 and e.residual < 1e-8
    p = dict(zip(model.marker_names, model.marker_positions(e.q).reshape(-1, 3)))
    np.testing.assert_allclose(p["ball1"], [0.05, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(p["ball2"], [-0.05, 0.0, 0.0], atol=1e-9)
    slider = FLYBALL["density"] * FLYBALL["cube"] ** 3
    sag = slider * FLYBALL["g"] / (2.0 * FLYBALL["stiffness"])
    np.testing.assert_allclose(p["S"], [0.0, 0.0, -sag], atol=1e-12)
    assert e.stable is None     # the shaft's free turn about z: neutral


def test_bricard_comes_to_rest_at_the_bottom_of_its_swing():
    """Bricard's linkage (IFToMM A04, one degree of freedom, conservative): released from
    the top of its swing, it rests at the bottom, P3 at (0, -sqrt(3)/2, -1/2) m, where its
    potential energy is least over the swing it makes from the start. An
    undamped run from rest passes that point: its lowest sampled potential energy lies within
    the sampling's second-order error above the equilibrium's, and never below it."""
    model = linkdyn.load_model("bricard")
    e = linkdyn.equilibrium(model, redundant="allow")
    assert e.method == "release" and e.stable is True
    # where Newton's method from the swing's middle finds it (tests/test_spatial.py)
    np.testing.assert_allclose(model.marker_positions(e.q)[0],
                               [0.0, -math.sqrt(3.0) / 2.0, -0.5], atol=1e-9)
    zero = np.zeros(model.nq)
    rest = model.energy(e.q, zero)[1]
    run = linkdyn.simulate(model, 3.0, redundant="allow", dt_out=1e-3, v0=zero)
    low = run.potential_energy.min()
    assert 0.0 <= low - rest < 1e-5 * np.ptp(run.potential_energy)


def test_a_released_body_held_only_by_friction_is_refused_at_once():
    """A block at rest on an incline is held by friction, which the statics leave out: no
    equilibrium. Released, it does not move, so the search stops after one run and says
    why."""
    with pytest.raises(EquilibriumError, match=r"in 1 run \(.*friction"):
        linkdyn.equilibrium("block_on_incline")


def test_ctrl_c_stops_the_release_between_its_runs(monkeypatch):
    """Ctrl-C pressed in Python between two runs of the release (here inside a finaliser,
    where a KeyboardInterrupt would be lost) ends the search at once with KeyboardInterrupt,
    instead of the 24 runs that the walker (held by friction) would take."""
    from conftest import ctrl_c_in_a_finaliser

    from linkdyn.solve import statics

    calls = []
    newton = statics._newton

    def pressed(*args):
        calls.append(1)
        if len(calls) == 2:         # the first try from a stop of the release
            ctrl_c_in_a_finaliser()
        return newton(*args)

    monkeypatch.setattr(statics, "_newton", pressed)
    with pytest.raises(KeyboardInterrupt):
        linkdyn.equilibrium("walker_gait1")
    assert len(calls) == 2


def test_equilibria_of_random_chains_satisfy_the_statics():
    """Chains of 1 to 5 bars started at any angle, with or without joint springs: each
    equilibrium found (from the guess or after a release) satisfies Phi_q^T lam = Q and
    Phi = 0, recomputed here; after a release, where the chain came to rest, it is stable
    (bars hanging, joint springs holding)."""
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=25, deadline=None, derandomize=True)
    @hypothesis.given(n=st.integers(1, 5), angle=st.floats(-math.pi, math.pi),
                      stiffness=st.sampled_from([0.0, 0.05, 1.0]))
    def check(n, angle, stiffness):
        model = linkdyn.chain(n, angle=angle, joint_stiffness=stiffness)
        e = linkdyn.equilibrium(model)
        zero = np.zeros(model.nq)
        load = model.force(e.q, zero, 0.0)
        scale = max(1.0, float(np.abs(load).max()))
        assert np.abs(model.phi_q(e.q).T @ e.lam - load).max() < 1e-9 * scale
        assert np.abs(model.phi(e.q)).max() < 1e-9
        if e.method == "release":
            assert e.stable is True

    check()


def test_newton_iterates_outside_the_models_domain_are_an_equilibrium_error(monkeypatch):
    """The fourth walker, released, has no equilibrium in the statics (friction holds it):
    the search ends with an EquilibriumError. On its way Newton's iterates leave the
    model's domain; where they do depends on the linear algebra's last bits (numpy 2.2: a
    foot spring's two points met, which the kernels refuse with a ValueError; numpy 2.4: the
    residual overflowed, which compared as converged). Both ways out are EquilibriumErrors,
    checked here each at a chosen iterate."""
    from linkdyn.solve import statics

    with pytest.raises(EquilibriumError, match="did not come to rest"):
        linkdyn.equilibrium("walker_gait4")
    model = linkdyn.load_model("walker_gait4")
    residual = statics._kkt_residual

    def refused(*args):     # the kernels' refusal at the first iterate
        if calls.append(1) or len(calls) > 1:
            raise ValueError("spring-damper 'foot': its two points coincide")
        return residual(*args)

    def overflowed(*args):
        return residual(*args) * (np.inf if calls.append(1) or len(calls) > 1 else 1.0)

    for fake, match in ((refused, "left the model's domain.*coincide"),
                        (overflowed, "residual overflowed at Newton iteration 1")):
        calls = []
        monkeypatch.setattr(statics, "_kkt_residual", fake)
        with pytest.raises(EquilibriumError, match=match):
            linkdyn.equilibrium(model, release=False)
        assert len(calls) >= 2        # the start, then the iterate the fake acted on
    # a residual that is NaN at the guess already is not taken for converged either
    monkeypatch.setattr(statics, "_kkt_residual", lambda *args: residual(*args) * np.nan)
    with pytest.raises(EquilibriumError, match="not finite at the guess"):
        linkdyn.equilibrium(model, release=False)
