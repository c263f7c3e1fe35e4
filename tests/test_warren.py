"""The Warren truss (linkdyn.models.warren): a closed-loop model of any size that moves as one
rigid body, against the compound pendulum and the rigid rotation."""

import math

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError
from linkdyn.models import truss
from linkdyn.models.warren import truss_exact, truss_nodes
from conftest import ROUNDOFF


def test_the_truss_is_one_rigid_body_of_one_degree_of_freedom():
    model = truss(4)
    assert model.nbody == 15 and model.nominal_dof == 1
    # A simple truss has no redundant constraint: the initial state assembles as built.
    state = linkdyn.consistent_state(model)
    assert np.abs(state.q - model.q0).max() < ROUNDOFF


def test_swinging_truss_is_a_compound_pendulum():
    panels = 50
    t = np.linspace(0.0, 3.0, 31)
    r = linkdyn.simulate(truss(panels), 3.0, rtol=1e-10, atol=1e-10, t_out=t)
    phi = truss_exact(panels, t)
    assert phi.min() < -1.0                     # it swings far: a nonlinear pendulum
    # Every bar turns by phi; the tip stays on its circle.
    for bar in ("B0", "U25", "T48", f"B{panels - 1}"):
        initial = r.body_angle(bar)[0]
        assert np.abs(r.body_angle(bar) - initial - phi).max() < 1e-8
    tip = r.marker("tip")
    np.testing.assert_allclose(np.hypot(tip[:, 0], tip[:, 1]), panels, rtol=1e-12)
    # Energy is conserved to a tiny part of what the swing exchanges.
    assert np.ptp(r.energy) < 1e-8 * r.kinetic_energy.max()
    assert r.phi_norm.max() < 1e-9


def test_driven_truss_turns_rigidly_in_kinematics():
    panels, rate = 300, 0.7
    model = truss(panels, driven=True, rate=rate)
    times = np.linspace(0.0, 2.0, 41)
    # 300 panels are ill-conditioned (reciprocal condition 7e-7 at best) though nowhere
    # singular: the default threshold stops the sweep, and says why it may be wrong.
    with pytest.raises(linkdyn.SingularConfigurationError,
                       match="not diagnosed for models over 2000 coordinates.*lower "
                             "singular_rcond below 7e-07"):
        linkdyn.kinematics(model, times)
    r = linkdyn.kinematics(model, times, singular_rcond=1e-9)
    assert not r.singularities and r.rcond.min() < 1e-6
    phi = rate * r.t
    bottom, top = truss_nodes(panels)
    x = bottom[-1, 0]
    np.testing.assert_allclose(r.marker("tip"), np.column_stack([x * np.cos(phi),
                                                                 x * np.sin(phi)]), atol=1e-10)
    np.testing.assert_allclose(r.marker_velocity("tip"),
                               rate * np.column_stack([-x * np.sin(phi), x * np.cos(phi)]),
                               atol=1e-10)
    np.testing.assert_allclose(r.marker_acceleration("tip"),
                               -rate**2 * np.column_stack([x * np.cos(phi), x * np.sin(phi)]),
                               atol=1e-9)
    np.testing.assert_allclose(r.body_angular_velocity("T150"), rate, atol=1e-12)


def test_bad_truss_arguments_name_the_argument():
    with pytest.raises(ModelError, match="panels must be a positive integer"):
        truss(0)
    with pytest.raises(ModelError, match="length must be a positive number"):
        truss(3, length=-1.0)
    with pytest.raises(ModelError, match="mass must be a positive number"):
        truss(3, mass=math.nan)
