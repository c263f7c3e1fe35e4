"""Shared small models and numerical helpers for the tests."""

import math

import numpy as np
import pytest

import linkdyn


def central_difference(f, x, h=1e-6):
    """Jacobian of f at x by central differences, shape (len(f(x)), len(x))."""
    x = np.asarray(x, dtype=float)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.array(cols).T


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


@pytest.fixture
def fourbar():
    return fourbar_builder().build()


@pytest.fixture(scope="session")
def jansen():
    return linkdyn.load_model("jansen")
