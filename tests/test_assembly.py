"""Consistent initial states: projections, held coordinates, and the errors that name rows."""

import math

import numpy as np
import pytest
import scipy.linalg

import linkdyn
from linkdyn import AssemblyError, ModelError, RedundantConstraintsError, laws
from conftest import ROUNDOFF, bar_fourbar_builder, fourbar_builder


def test_fourbar_projection(fourbar):
    s = linkdyn.consistent_state(fourbar)
    assert s.phi_norm <= 1e-13 and s.velocity_norm <= 1e-13
    assert 2 <= s.iterations <= 8
    np.testing.assert_array_equal(s.q[:4], fourbar.q0[:4])  # the crank is held
    np.testing.assert_array_equal(s.v[:4], fourbar.v0[:4])
    assert np.linalg.norm(fourbar.phi(s.q)) == pytest.approx(s.phi_norm)


def test_velocity_projection_is_the_mass_weighted_least_change(fourbar):
    # v - v0 minimises (v - v0)^T M (v - v0) on the free coordinates, so M (v - v0) lies in the
    # row space of Phi_q: it is orthogonal to every velocity the constraints allow.
    # Nothing held: the four-bar keeps its one free motion.
    s2 = linkdyn.consistent_state(fourbar, hold=())
    J = fourbar.phi_q(s2.q).toarray()
    null = scipy.linalg.null_space(J)
    assert null.shape[1] == 1
    dv = fourbar.mass * (s2.v - fourbar.v0)
    assert abs(null[:, 0] @ dv) <= 1e-12 * np.linalg.norm(dv)
    assert np.linalg.norm(J @ s2.v) <= 1e-13


def test_hold_by_coordinate(fourbar):
    # The crank's orientation held, its centre free: the pin at O fixes the centre.
    q = fourbar.q0.copy()
    q[0] += 0.003
    s = linkdyn.consistent_state(fourbar, q=q, hold=["crank.ux", "crank.uy"])
    np.testing.assert_array_equal(s.q[2:4], fourbar.q0[2:4])
    np.testing.assert_allclose(s.q[:2], fourbar.q0[:2], atol=ROUNDOFF)
    assert s.phi_norm <= 1e-13


def test_holding_a_pinned_crank_centre_is_redundant(fourbar):
    # Centre held and end pinned leave two unknowns (ux, uy) for three rows.
    with pytest.raises(RedundantConstraintsError) as info:
        linkdyn.consistent_state(fourbar, hold=["crank.x", "crank.y"])
    assert set(info.value.constraints) == {"O_crank.x", "O_crank.y", "crank.unit"}


def test_hold_errors(fourbar):
    with pytest.raises(ModelError, match="unknown body 'crnk'"):
        linkdyn.consistent_state(fourbar, hold=["crnk"])
    with pytest.raises(ModelError, match="coordinate must be one of x, y, ux, uy"):
        linkdyn.consistent_state(fourbar, hold=["crank.z"])
    with pytest.raises(ModelError, match="expected body names"):
        linkdyn.consistent_state(fourbar, hold=[3])


def test_guess_arguments_are_checked(fourbar):
    with pytest.raises(ValueError, match="shape \\(12,\\)"):
        linkdyn.consistent_state(fourbar, q=np.zeros(3))
    q = fourbar.q0.copy()
    q[5] = np.nan
    with pytest.raises(ValueError, match="'coupler.y' is not finite"):
        linkdyn.consistent_state(fourbar, q=q)


def test_redundant_constraints_are_named():
    # A second pin at the same place as the first: rows redundant with J1's.
    b = linkdyn.ModelBuilder("redundant")
    b.add_ground_point("O", (0, 0))
    b.add_ground_point("O2", (0, 0))
    b.add_bar("rod", length=1.0, density=1.0, position=(0.5, 0.0))
    b.add_revolute("J1", "rod.a", "ground.O")
    b.add_revolute("J2", "rod.a", "ground.O2")
    with pytest.raises(RedundantConstraintsError, match="redundant or conflicting") as info:
        linkdyn.consistent_state(b.build())
    assert set(info.value.constraints) == {"J1.x", "J1.y", "J2.x", "J2.y"}
    assert isinstance(info.value, AssemblyError)


def test_parallelogram_with_extra_bar_is_redundant():
    # The classic overconstrained parallelogram: the middle bar adds a redundant row.
    b = linkdyn.ModelBuilder("parallelogram", gravity=(0, 0))
    for i, x in enumerate((0.0, 0.5, 1.0)):
        b.add_ground_point(f"G{i}", (x, 0.0))
        b.add_bar(f"R{i}", length=0.4, density=1.0, position=(x, 0.2), angle=np.pi / 2)
        b.add_revolute(f"g{i}", f"R{i}.a", f"ground.G{i}")
    b.add_bar("top", length=1.0, density=1.0, position=(0.5, 0.4))
    b.add_body("dummy", mass=1.0, inertia=1.0, position=(5, 5))
    b.add_revolute("t0", "R0.b", "top.a")
    b.add_revolute("t1", "R1.b", ("top", "cm"))
    b.add_revolute("t2", "R2.b", "top.b")
    with pytest.raises(RedundantConstraintsError, match="rank 16 of 17 rows") as info:
        linkdyn.consistent_state(b.build(), hold=())
    # One redundancy, among the vertical rows of the three upright rockers (their pins' y rows
    # and their unit-vector rows fix the top's height three times over); never the free body.
    assert set(info.value.constraints) == {
        "g0.y", "g1.y", "g2.y", "t0.y", "t1.y", "t2.y", "R0.unit", "R1.unit", "R2.unit"}


def test_unreachable_configuration_names_the_joints():
    # A 1 m bar cannot reach between ground points 3 m apart.
    b = linkdyn.ModelBuilder("stretched")
    b.add_ground_point("O", (0, 0))
    b.add_ground_point("P", (3, 0))
    b.add_bar("rod", length=1.0, density=1.0, position=(0.5, 0.1))
    b.add_revolute("left", "rod.a", "ground.O")
    b.add_revolute("right", "rod.b", "ground.P")
    with pytest.raises(AssemblyError) as info:
        linkdyn.consistent_state(b.build(), max_iterations=15)
    assert any(name.startswith(("left", "right")) for name in info.value.constraints)


def test_violated_rows_on_held_coordinates():
    b = fourbar_builder()
    b.add_ground_point("far", (1.0, 1.0))
    model = b.build()
    q = model.q0.copy()
    q[0] += 0.01  # the held crank no longer sits on its ground pin
    with pytest.raises(AssemblyError, match="conflict with the held bodies 'crank' "
                       r"\(residuals: O_crank.x") as info:
        linkdyn.consistent_state(model, q=q)
    assert "cannot be met without moving held bodies" in str(info.value)


def test_messages_name_what_cannot_be_assembled():
    """A four-bar whose links are too short to span its base, and a driver that disagrees
    with a held body: the errors say which loop, and what conflicts with what."""
    b = bar_fourbar_builder("open4", crank=0.2, coupler=0.3, rocker=0.2)
    with pytest.raises(AssemblyError, match="the bodies crank, coupler, rocker with the "
                       "joints A, B, D, E cannot be assembled"):
        linkdyn.consistent_state(b.build())
    b = linkdyn.ModelBuilder("conflict")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("bar", length=1.0, mass=1.0, position=(0.5, 0.0), u=(1.0, 0.0), hold=True)
    b.add_revolute("J", "bar.a", "ground.O")
    b.add_angle_driver("d", "J", laws.constant(-math.pi / 3))
    with pytest.raises(AssemblyError, match="driver 'd' cannot move held bodies"):
        linkdyn.consistent_state(b.build())


@pytest.mark.parametrize("model_name", ["jansen", "chain"])
def test_cholmod_and_superlu_routes_agree(monkeypatch, model_name):
    pytest.importorskip("sksparse.cholmod")
    model = linkdyn.load_model("jansen") if model_name == "jansen" else linkdyn.chain(200)
    from linkdyn.assembly import spd_backend

    monkeypatch.delenv("LINKDYN_NO_CHOLMOD", raising=False)   # the suite may run with it set
    assert spd_backend() == "cholmod"
    with_cholmod = linkdyn.consistent_state(model)
    monkeypatch.setenv("LINKDYN_NO_CHOLMOD", "1")
    assert spd_backend() == "superlu"
    with_superlu = linkdyn.consistent_state(model)
    np.testing.assert_allclose(with_superlu.q, with_cholmod.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(with_superlu.v, with_cholmod.v, rtol=0, atol=1e-12)
    assert with_superlu.iterations == with_cholmod.iterations


def test_large_model_assembles_to_round_off():
    # 1,000 bars reaching 70 m from the origin: the residual's round-off level is above
    # 1e-13, and the projection stops there instead of failing.
    model = linkdyn.chain(1000)
    q = model.q0.copy()
    q[0::4] += 1e-4 * np.sin(np.arange(model.nbody))  # a perturbed guess
    s = linkdyn.consistent_state(model, q=q)
    eps = np.finfo(float).eps
    assert s.phi_norm <= 4 * eps * np.sqrt(model.nc) * np.abs(s.q).max()
    assert s.iterations <= 6


def test_rank_test_does_not_depend_on_the_size_of_masses():
    # A pendulum of 1e11 kg and 1e8 kg m^2 is not redundant (it was reported "rank 6 of 6").
    for mass, inertia in ((1e11, 1e8), (1e-9, 1e-12), (1e11, 1e-3), (1e-3, 1e11), (1e15, 1.0)):
        b = linkdyn.ModelBuilder("heavy")
        b.add_ground_point("O", (0.0, 0.0))
        b.add_body("bob", mass=mass, inertia=inertia, points={"top": (0.0, 0.5)},
                   position=(0.0, -0.5))
        b.add_revolute("pin", "bob.top", "ground.O")
        state = linkdyn.consistent_state(b.build())
        assert state.phi_norm < ROUNDOFF


def test_cholmod_analysis_follows_the_jacobian_pattern():
    # Entries exactly zero at one state (a bar along an axis) and not at the next change the
    # pattern of A: the symbolic analysis is redone, and the factor solves the new A A^T.
    pytest.importorskip("sksparse")
    import scipy.sparse as sp

    from linkdyn.assembly import _CholmodAAt

    A1 = sp.csc_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    A2 = sp.csc_matrix(np.array([[1.0, 0.5, 2.0], [0.0, 3.0, 1.0]]))
    spd = _CholmodAAt()
    spd.factorize(A1)
    first = spd.factor
    spd.factorize(A1 * 2.0)
    assert spd.factor is first                      # same pattern: numeric refactorisation
    spd.factorize(A2)
    assert spd.factor is not first
    b = np.array([1.0, 2.0])
    np.testing.assert_allclose((A2 @ A2.T) @ spd.solve(b), b, rtol=1e-13)


@pytest.mark.parametrize("distance", [1e6, 1e12, 1e14, 1e16])
def test_far_bodies_meet_their_unit_rows_to_their_own_scale(distance):
    """A body far from the origin with a direction that is not a unit vector: the position
    rows' test grows with the coordinates, but the unit row is dimensionless and must hold
    to its own rounding. Before, from about 1e14 m the row was left at |u|^2 - 1 = 0.34
    (2.02 in the fuzzing run) with the state reported consistent."""
    b = linkdyn.ModelBuilder("far")
    b.add_ground_point("O", (distance, 0.0))
    b.add_bar("bar", length=1.0, density=1.0, position=(distance + 0.5, 0.0), u=(1.7, 0.4))
    b.add_revolute("pin", "bar.a", "ground.O")
    model = b.build()
    state = linkdyn.consistent_state(model)
    ux, uy = state.q[2:4]
    assert abs(ux * ux + uy * uy - 1.0) < 1e-13
    # and the pin holds at the rounding of coordinates of that size
    unit = model.constraint_names.index("bar.unit")
    pin = [i for i in range(model.nc) if i != unit]
    assert np.abs(model.phi(state.q)[pin]).max() <= 16 * np.finfo(float).eps * distance


def test_a_start_far_from_any_assembled_position_is_warned_of_by_body():
    """A pendulum bar of 1 m guessed 7 m from its pivot: the projection moves it 7 m, more
    than the whole mechanism measures; the state is returned with a ModelWarning that names
    the body and the distance (it moved in silence before). Guesses within the mechanism's
    size (the built-ins') move without a word."""
    import warnings

    b = linkdyn.ModelBuilder("far_guess")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("bar", length=1.0, density=1.0, position=(7.5, 0.0), angle=0.0)
    b.add_revolute("pin", "bar.a", "ground.O")
    with pytest.warns(linkdyn.ModelWarning, match=r"7 m from the guess of body 'bar'"):
        state = linkdyn.consistent_state(b.build())
    assert np.abs(state.q[:2]).max() <= 0.5 + 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)
        linkdyn.consistent_state("jansen")
        linkdyn.consistent_state("heavy_top")
