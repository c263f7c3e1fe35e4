"""The Jansen mechanism of the benchmark: structure and consistent initial state."""

import math

import numpy as np
import pytest

import linkdyn
from conftest import ROUNDOFF

# Table 1 of the benchmark: bar lengths (m); linear density 1 kg/m.
LENGTHS = [0.150, 0.500, 0.415, 0.393, 0.619, 0.558, 0.401, 0.394, 0.367, 0.657, 0.491]


def test_structure(jansen):
    assert jansen.nq == 44 and jansen.nc == 43
    assert len(jansen.joint_names) == 16 and jansen.nbody == 11
    J = jansen.phi_q(jansen.q0).toarray()
    assert np.linalg.matrix_rank(J) == 43
    assert jansen.nq - np.linalg.matrix_rank(J) == 1


def test_mass_properties_follow_table_1(jansen):
    for i, L in enumerate(LENGTHS):
        m, jz = jansen.mass[4 * i], jansen.mass[4 * i + 2]
        assert m == pytest.approx(L)
        assert jz == pytest.approx(L**3 / 12)


def test_consistent_initial_state(jansen):
    s = linkdyn.consistent_state(jansen)
    assert s.phi_norm <= 1e-13
    assert s.velocity_norm <= 1e-12
    T, V = jansen.energy(s.q, s.v)
    assert T + V == pytest.approx(-0.5806293458, abs=5e-11)
    # The crank is held: horizontal, centre (0.075, 0), turning at -2 pi rad/s.
    np.testing.assert_array_equal(s.q[:4], [0.075, 0.0, 1.0, 0.0])
    np.testing.assert_allclose(s.v[:4], [0.0, -0.075 * 2 * math.pi, 0.0, -2 * math.pi],
                               rtol=ROUNDOFF)
    # Table 2 is printed to 5 decimals: the projection moves it by no more than that.
    assert np.max(np.abs(s.q - jansen.q0)) < 1e-4
    assert np.max(np.abs(s.v - jansen.v0)) < 1e-4


def test_energy_by_hand(jansen):
    s = linkdyn.consistent_state(jansen)
    total = 0.0
    for i, L in enumerate(LENGTHS):
        x, y, ux, uy = s.q[4 * i:4 * i + 4]
        vx, vy, uxd, uyd = s.v[4 * i:4 * i + 4]
        omega = ux * uyd - uy * uxd
        total += 0.5 * L * (vx**2 + vy**2) + 0.5 * L**3 / 12 * omega**2 + L * 9.81 * y
    assert total == pytest.approx(-0.5806293458, abs=5e-11)


def test_markers(jansen):
    s = linkdyn.consistent_state(jansen)
    p3, foot = jansen.marker_positions(s.q)
    np.testing.assert_allclose(p3, [0.15, 0.0], atol=ROUNDOFF)
    # The foot is the b end of bar 10: centre + L/2 u.
    np.testing.assert_allclose(foot, s.q[36:38] + 0.657 / 2 * s.q[38:40], rtol=ROUNDOFF)
    v3 = jansen.marker_velocities(s.v)[0]
    np.testing.assert_allclose(v3, [0.0, -0.15 * 2 * math.pi], rtol=ROUNDOFF)
