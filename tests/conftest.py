"""Shared small models and numerical helpers for the tests."""

import contextlib
import math
import os
import signal
import threading
import warnings

import numpy as np
import pytest

import linkdyn

#: A margin at the round-off of a quantity of order 1 that holds on every platform: 256 ulps
#: (5.7e-14). The compiled kernels, BLAS and libm differ in their last bits between the
#: x86_64, aarch64, macOS and Windows builds, so an assertion at 1e-15 would test the
#: platform, not the physics. Quantities of another scale take a multiple of it.
ROUNDOFF = 256 * np.finfo(float).eps


@contextlib.contextmanager
def ctrl_c_after(seconds=0.3):
    """Send this process SIGINT (Ctrl-C) ``seconds`` after entering (POSIX); the warnings
    raised inside are recorded in the list the context yields."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        timer.cancel()


def ctrl_c_in_a_finaliser():
    """Press Ctrl-C (SIGINT) from inside a weakref callback, a finaliser: Python raises
    its KeyboardInterrupt there, where it is printed as "Exception ignored" and lost."""
    import gc
    import weakref

    class Token:
        pass

    token = Token()
    ref = weakref.ref(token, lambda _: signal.raise_signal(signal.SIGINT))
    del token                       # the callback runs here, and the Ctrl-C in it
    gc.collect()
    assert ref() is None


def central_difference(f, x, h=1e-6):
    """Jacobian of f at x by central differences, shape (len(f(x)), len(x))."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.array(cols).T


def assert_rows_match_differences(model, q, v, lam):
    """Phi_q, gamma = -(Phi_q v)_q v and the Hessian (Phi_q^T lam)_q of ``model`` at q
    against central differences."""
    np.testing.assert_allclose(model.phi_q(q).toarray(), central_difference(model.phi, q),
                               atol=1e-9)
    rate = central_difference(lambda x: model.phi_q(x).toarray() @ v, q) @ v
    np.testing.assert_allclose(model.gamma(q, v), -rate, atol=1e-8)
    fd = central_difference(lambda x: model.phi_q(x).toarray().T @ lam, q)
    np.testing.assert_allclose(model.constraint_hessian(q, lam).toarray(), fd, atol=1e-8)


def sampled_peaks(t, z, after=0.1):
    """Times of the local maxima of samples z(t) on a uniform grid after ``after``, each
    refined by the parabola through the samples around it."""
    dt, peaks = t[1] - t[0], []
    for k in range(1, len(z) - 1):
        if z[k] > z[k - 1] and z[k] >= z[k + 1] and t[k] > after:
            a, b, c = z[k - 1:k + 2]
            peaks.append(t[k] + 0.5 * dt * (a - c) / (a - 2 * b + c))
    return np.array(peaks)


def random_state(model, seed):
    """q near the model's guesses but off the constraint manifold (kernels must be right
    everywhere) and an arbitrary v."""
    rng = np.random.default_rng(seed)
    return model.q0 + 0.1 * rng.standard_normal(model.nq), rng.standard_normal(model.nq)


def fourbar_builder(crank=0.1, coupler=0.35, rocker=0.3, base=0.4, theta=1.0):
    """A crank-rocker four-bar: ground O (0, 0), C (base, 0); crank O-A, coupler A-B as a
    general body with a coupler point, rocker C-B. Initial guesses from the exact closure
    at crank angle ``theta`` (rad), slightly perturbed so the projection has work to do."""
    ax, ay = crank * math.cos(theta), crank * math.sin(theta)
    # B from circle intersection |B - A| = coupler, |B - C| = rocker (upper branch).
    dx, dy = base - ax, -ay
    d = math.hypot(dx, dy)
    a = (coupler**2 - rocker**2 + d**2) / (2 * d)
    h = math.sqrt(coupler**2 - a**2)
    bx = ax + a * dx / d - h * dy / d
    by = ay + a * dy / d + h * dx / d
    b = linkdyn.ModelBuilder("fourbar")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("C", (base, 0.0))
    omega = 3.0  # the held crank's centre moves at omega x r_centre
    b.add_bar("crank", length=crank, density=2.0, position=(ax / 2, ay / 2), angle=theta,
              velocity=(-omega * ay / 2, omega * ax / 2), omega=omega, hold=True)
    cu = math.atan2(by - ay, bx - ax)
    b.add_body("coupler", mass=0.7, inertia=0.008,
               points={"A": (-coupler / 2, 0.0), "B": (coupler / 2, 0.0), "P": (0.05, 0.08)},
               position=((ax + bx) / 2 + 1e-3, (ay + by) / 2 - 2e-3), angle=cu + 0.01)
    ru = math.atan2(by, bx - base)
    b.add_bar("rocker", mass=0.25, length=rocker, position=((base + bx) / 2, by / 2),
              angle=ru - 0.02, inertia=0.003)
    b.add_revolute("O_crank", "crank.a", "ground.O")
    b.add_revolute("A", "crank.b", "coupler.A")
    b.add_revolute("B", "coupler.B", "rocker.b")
    b.add_revolute("C_rocker", "ground.C", "rocker.a")
    b.add_marker("P", "coupler.P")
    return b


def rocker_driven_past_its_dead_centre():
    """fourbar_builder's crank-rocker, every body free (none held), its rocker driven at
    -0.5 rad/s from its start ("rocker_drive") towards its extreme, where crank and coupler
    line up and Phi_q loses rank (about 0.038 s in)."""
    import dataclasses

    from linkdyn.model import compile_model

    b = fourbar_builder()
    start = linkdyn.consistent_state(b.build())
    i = 4 * b.build().body_names.index("rocker")
    phi0 = math.atan2(start.q[i + 3], start.q[i + 2])
    b.add_angle_driver("rocker_drive", "C_rocker", linkdyn.laws.linear(phi0, -0.5))
    desc = b.description()
    return compile_model(dataclasses.replace(
        desc, bodies=tuple(dataclasses.replace(x, hold=False) for x in desc.bodies)))


@pytest.fixture
def code_cache(tmp_path, monkeypatch):
    """A fresh cache of straight-line code (linkdyn.solve.generated, linkdyn.solve.lu_code),
    and nothing built or loaded before in this process counts."""
    from linkdyn.solve import generated, lu_code

    monkeypatch.setenv("LINKDYN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(generated, "_loaded", {})
    monkeypatch.setattr(generated, "_seen", {})
    monkeypatch.setattr(lu_code, "_seen", {})
    monkeypatch.setattr(lu_code, "_orders", {})
    return tmp_path


def without_and_with_code(monkeypatch, run, *args, **kw):
    """(run(*args, **kw) with LINKDYN_GENERATED_CODE=off, the same with =require)."""
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "off")
    without = run(*args, **kw)
    monkeypatch.setenv("LINKDYN_GENERATED_CODE", "require")
    return without, run(*args, **kw)


def dead_centre_errors(monkeypatch, method, modes):
    """The SimulationError of rocker_driven_past_its_dead_centre run for 3 s at rtol 1e-8
    with ``method``, once for each LINKDYN_GENERATED_CODE setting of ``modes``."""
    model = rocker_driven_past_its_dead_centre()
    errors = []
    for how in modes:
        monkeypatch.setenv("LINKDYN_GENERATED_CODE", how)
        with pytest.raises(linkdyn.SimulationError) as info:
            linkdyn.simulate(model, 3.0, rtol=1e-8, atol=1e-8, method=method)
        errors.append(info.value)
    return errors


@pytest.fixture
def fourbar():
    return fourbar_builder().build()


@pytest.fixture(scope="session")
def jansen():
    return linkdyn.load_model("jansen")


class ReducedCrank:
    """Independent solution of a one-degree-of-freedom mechanism in one coordinate.

    The crank (a body pinned to the ground) turns by the angle theta; every other coordinate
    follows from the constraints by Newton's method. With q_theta = dq/dtheta (from
    Phi_q q_theta = 0) and q_thth (from Phi_q q_thth = gamma(q, q_theta)), the Lagrange equation
    of the single coordinate is

        m(theta) theta'' = q_theta^T Q - (q_theta^T M q_thth) theta'^2,   m = q_theta^T M q_theta.

    It uses only the model's Phi, Phi_q, gamma and Q (checked against finite differences in
    test_kernels.py), not linkdyn's integrator or projections.
    """

    def __init__(self, model, crank, pivot_local, pivot_global, q_guess):
        self.model = model
        i = model.body_names.index(crank)
        self.crank = np.arange(4 * i, 4 * i + 4)
        self.dep = np.setdiff1d(np.arange(model.nq), self.crank)
        self.xi, self.eta = pivot_local
        self.P = np.asarray(pivot_global, dtype=float)
        # Rows touching dependent coordinates (the others hold by construction of c(theta)).
        J = model.phi_q(model.q0).tocsr()
        self.rows = np.array([r for r in range(model.nc)
                              if np.any(np.isin(J.indices[J.indptr[r]:J.indptr[r + 1]],
                                                self.dep))])
        self.q = np.array(q_guess, dtype=float)

    def crank_coords(self, theta):
        """c(theta), dc/dtheta, d2c/dtheta2 for the crank's (x, y, ux, uy)."""
        u = np.array([np.cos(theta), np.sin(theta)])
        pu = np.array([-u[1], u[0]])
        c = np.concatenate([self.P - self.xi * u - self.eta * pu, u])
        c1 = np.concatenate([-self.xi * pu + self.eta * u, pu])
        c2 = np.concatenate([self.xi * u + self.eta * pu, -u])
        return c, c1, c2

    def positions(self, theta):
        q = self.q.copy()
        q[self.crank], _, _ = self.crank_coords(theta)
        rows, dep = self.rows, self.dep
        for _ in range(50):
            r = self.model.phi(q)[rows]
            if np.max(np.abs(r)) < 1e-15:
                break
            J = self.model.phi_q(q).toarray()[np.ix_(rows, dep)]
            q[dep] -= np.linalg.solve(J, r)
        else:
            raise RuntimeError(f"no closure at theta = {theta}")
        self.q = q
        return q

    def velocity_map(self, theta):
        """q(theta), q_theta, q_thth."""
        m, rows, dep, crank = self.model, self.rows, self.dep, self.crank
        q = self.positions(theta)
        _, c1, c2 = self.crank_coords(theta)
        J = m.phi_q(q).toarray()
        Jz, Jc = J[np.ix_(rows, dep)], J[np.ix_(rows, crank)]
        q1 = np.zeros(m.nq)
        q1[crank] = c1
        q1[dep] = np.linalg.solve(Jz, -Jc @ c1)
        q2 = np.zeros(m.nq)
        q2[crank] = c2
        q2[dep] = np.linalg.solve(Jz, m.gamma(q, q1)[rows] - Jc @ c2)
        return q, q1, q2

    def rhs(self, t, y):
        theta, omega = y
        q, q1, q2 = self.velocity_map(theta)
        M = self.model.mass
        generalized_force = q1 @ self.model.force(q, q1 * omega, t)
        acc = (generalized_force - (q1 @ (M * q2)) * omega**2) / (q1 @ (M * q1))
        return [omega, acc]

    def state(self, theta, omega):
        q, q1, _ = self.velocity_map(theta)
        return q, q1 * omega


def bar_fourbar_builder(name, crank, coupler, rocker, base=1.0):
    """Three bars of 1 kg: crank O-B and rocker C-D standing upright on ground points O (0, 0)
    and C (base, 0), coupler B-D level at the crank's height (joints A, B, D, E). These are
    guesses: a linkage whose lengths do not fit is assembled by the projection, or not."""
    b = linkdyn.ModelBuilder(name)
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("C", (base, 0.0))
    b.add_bar("crank", length=crank, mass=1.0, position=(0.0, crank / 2), u=(0.0, 1.0))
    b.add_bar("coupler", length=coupler, mass=1.0, position=(base / 2, crank), u=(1.0, 0.0))
    b.add_bar("rocker", length=rocker, mass=1.0, position=(base, rocker / 2), u=(0.0, 1.0))
    b.add_revolute("A", "crank.a", "ground.O")
    b.add_revolute("B", "crank.b", "coupler.a")
    b.add_revolute("D", "coupler.b", "rocker.b")
    b.add_revolute("E", "rocker.a", "ground.C")
    return b


def circle_intersection(p, rp, q, rq, near):
    """The intersection of the circles about p (radius rp) and q (radius rq) nearer to
    ``near``: the closed-form position analysis of a dyad."""
    d = np.linalg.norm(q - p)
    a = (rp**2 - rq**2 + d**2) / (2 * d)
    h = math.sqrt(rp**2 - a**2)
    base = p + a * (q - p) / d
    perp = np.array([-(q - p)[1], (q - p)[0]]) / d
    cands = [base + h * perp, base - h * perp]
    return min(cands, key=lambda c: np.linalg.norm(c - near))


def triple_rocker_linkage():
    """A non-Grashof four-bar (base 1, crank 0.6, coupler 0.5, rocker 0.7 m), the crank at
    1.2 rad and the coupler above the line B-D: its crank rocks between +-acos(-1/15)."""
    B = 0.6 * np.array([math.cos(1.2), math.sin(1.2)])
    D = np.array([1.0, 0.0])
    d = np.linalg.norm(D - B)
    a = (0.5**2 - 0.7**2 + d**2) / (2 * d)
    normal = np.array([-(D - B)[1], (D - B)[0]]) / d
    C = B + a * (D - B) / d + math.sqrt(0.5**2 - a**2) * normal
    from linkdyn.geometric import Linkage

    g = Linkage("triple_rocker")
    for name, xy in (("A", (0.0, 0.0)), ("B", B), ("C", C), ("D", D)):
        g.revolute(name, tuple(xy))
    g.link("crank", ["A", "B"])
    g.link("coupler", ["B", "C"])
    g.link("rocker", ["C", "D"])
    g.link("base", ["A", "D"], ground=True)
    g.input("A", rate=1.0)
    return g
