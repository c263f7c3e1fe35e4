"""Lemke's method (linkdyn.lcp) against enumeration of complementary bases."""

import itertools

import numpy as np
import pytest

from linkdyn.lcp import LCPError, solve_lcp


def enumerate_lcp(M, q):
    """All solutions of a small LCP by trying every complementary basis."""
    n = len(q)
    found = []
    for active in itertools.product((False, True), repeat=n):
        a = np.flatnonzero(active)
        z = np.zeros(n)
        if a.size:
            try:
                z[a] = np.linalg.solve(M[np.ix_(a, a)], -q[a])
            except np.linalg.LinAlgError:
                continue
        w = M @ z + q
        if np.all(z >= -1e-12) and np.all(w >= -1e-12):
            found.append(z)
    return found


@pytest.mark.parametrize("seed", range(20))
def test_positive_definite_problems_match_the_unique_solution(seed):
    rng = np.random.default_rng(seed)
    n = 1 + seed % 6
    A = rng.standard_normal((n, n))
    M = A @ A.T + 0.1 * np.eye(n)
    q = rng.standard_normal(n)
    sol = solve_lcp(M, q)
    (exact,) = enumerate_lcp(M, q)
    np.testing.assert_allclose(sol.z, exact, atol=1e-10)
    np.testing.assert_allclose(sol.w, M @ sol.z + q, atol=1e-10)
    assert np.all(sol.z >= 0) and np.all(sol.w >= 0) and abs(sol.z @ sol.w) < 1e-12


def test_nonsymmetric_p_matrix():
    # A P-matrix that is not symmetric (all principal minors positive): unique solution.
    M = np.array([[1.0, 2.0], [0.0, 1.0]])
    q = np.array([-3.0, -1.0])
    sol = solve_lcp(M, q)
    np.testing.assert_allclose(sol.z, [1.0, 1.0])
    assert sol.pivots >= 2


def test_unsolvable_problem_raises_with_its_status():
    with pytest.raises(LCPError) as info:
        solve_lcp([[-1.0]], [-1.0])
    assert info.value.status == "ray"


def test_bad_arguments():
    with pytest.raises(ValueError, match="shape|must be"):
        solve_lcp(np.eye(2), [1.0])
    with pytest.raises(ValueError, match="finite"):
        solve_lcp([[np.nan]], [1.0])
    with pytest.raises(ValueError, match="max_pivots"):
        solve_lcp(np.eye(1), [-1.0], max_pivots=0)
