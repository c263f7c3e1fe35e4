"""Flexible joints (after Vigne's note on Jiminy) on a one-joint arm under gravity (arm 1 m,
1 kg, I = 1/3 kg m^2 about the pin; rotor J = 0.05 kg m^2; motor torque u = 4 sin 3t), 2 s at
rtol = atol = 1e-8, linkdyn's BDF against SciPy's explicit DOP853 (Jiminy's default integrator
is an explicit Runge-Kutta too) on the note's own equations in the joint coordinates, in the
same run.

Sweep 1, Jiminy's form (Figure 1b, equations (5)), I_f = 1e-2 ... 1e-6 of I (k = 50, nu = 0.5).
Measured: neither method's step count grows. With the rotor's armature J on the motor joint,
the mass matrix [[I + I_f, I], [I, I + J]] keeps the determinant I J + I_f (I + J) > I J as
I_f -> 0, so the spring's mode tends to sqrt(k (I + J) / (I J)), the series form's: small I_f
does not make this system stiff. (It does when the motor joint carries no inertia, J = 0.)

Jiminy itself (jiminy-py pins an older numpy, so it runs in an interpreter of its own:
LINKDYN_JIMINY_PYTHON=/path/to/python with jiminy-py installed; see jiminy_arm.py) simulates
the same arm in sweep 1 with its default explicit Runge-Kutta (Dormand-Prince) at the same
tolerances; the output angles are compared with linkdyn's and the timings written to
benchmarks/results/jiminy_flexible.json. Jiminy refuses I_f below 1e-5 kg m^2.

Sweep 2, the series form (Figure 1a, equations (1)), a stiffer transmission k = 5e1 ... 5e5
N m/rad, critically damped (nu = 2 sqrt(k J)): a fast decaying mode at sqrt(k / J). linkdyn's
step count stays flat; DOP853's grows with the stiffness.
"""

import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import linkdyn
from linkdyn import laws

TOL = 1e-8
J, I, M, G, L = 0.05, 1.0 / 3.0, 1.0, 9.81, 1.0
LAW = laws.harmonic(0.0, 4.0, 3.0)
FRACTIONS = [1e-2, 1e-4, 1e-6]
STIFFNESS = [5e1, 5e3, 5e5]


def arm(form, k, nu, fraction=None):
    b = linkdyn.ModelBuilder("arm", gravity=(0.0, -G))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("arm", length=L, mass=M, position=(0.5 * L, 0.0))
    b.add_revolute("shoulder", "ground.O", "arm.a")
    extra = {} if form == "series" else dict(flex_inertia=fraction * I)
    b.add_flexible_joint("sea", "shoulder", k, nu, J, 0.2, law=LAW, form=form, **extra)
    return b.build()


def jiminy_equations(fraction, k=50.0, nu=0.5):
    """Vigne's note, equations (5), with gravity on the arm: x1 deflection, x2 motor angle."""
    i_f = fraction * I
    det = (I + i_f) * (I + J) - I * I

    def rhs(t, y):
        x1, x2, v1, v2 = y
        f_ext = -M * G * 0.5 * L * math.cos(x1 + x2)
        b1, b2 = -k * x1 - nu * v1 + f_ext, 4.0 * math.sin(3.0 * t) + f_ext
        return [v1, v2, ((I + J) * b1 - I * b2) / det, ((I + i_f) * b2 - I * b1) / det]

    return rhs


def series_equations(k, nu):
    """Vigne's note, equations (1), with gravity on the arm."""
    def rhs(t, y):
        x1, x2, v1, v2 = y
        a2 = (4.0 * math.sin(3.0 * t) + k * x1 + nu * v1) / J
        f_ext = -M * G * 0.5 * L * math.cos(x1 + x2)
        return [v1, v2, (-k * x1 - nu * v1 + f_ext) / I - a2, a2]

    return rhs


def _linkdyn(benchmark, model):
    benchmark.extra_info["role"] = "linkdyn"
    r = benchmark.pedantic(linkdyn.simulate, args=(model, 2.0),
                           kwargs=dict(rtol=TOL, atol=TOL, dt_out=0.01), rounds=3, iterations=1)
    benchmark.extra_info.update(steps=r.stats["steps"],
                                newton_iterations=r.stats["newton_iterations"])


def _dop853(benchmark, rhs):
    benchmark.extra_info["role"] = "baseline"
    sol = benchmark.pedantic(solve_ivp, args=(rhs, (0.0, 2.0), [0.0, 0.0, 0.0, 0.0]),
                             kwargs=dict(method="DOP853", rtol=TOL, atol=TOL), rounds=3,
                             iterations=1)
    assert sol.success
    benchmark.extra_info.update(steps=int(sol.t.size - 1), evaluations=int(sol.nfev))


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_jiminy_form_linkdyn(benchmark, fraction):
    benchmark.group = f"flexible joint, Jiminy form, I_f = {fraction:g} I"
    _linkdyn(benchmark, arm("jiminy", 50.0, 0.5, fraction))


@pytest.mark.parametrize("fraction", FRACTIONS)
def test_jiminy_form_dop853(benchmark, fraction):
    benchmark.group = f"flexible joint, Jiminy form, I_f = {fraction:g} I"
    _dop853(benchmark, jiminy_equations(fraction))


@pytest.mark.parametrize("k", STIFFNESS)
def test_series_stiff_linkdyn(benchmark, k):
    benchmark.group = f"flexible joint, series form, k = {k:g}"
    _linkdyn(benchmark, arm("series", k, 2.0 * math.sqrt(k * J)))


@pytest.mark.parametrize("k", STIFFNESS)
def test_series_stiff_dop853(benchmark, k):
    benchmark.group = f"flexible joint, series form, k = {k:g}"
    _dop853(benchmark, series_equations(k, 2.0 * math.sqrt(k * J)))


JIMINY = os.environ.get("LINKDYN_JIMINY_PYTHON")


@pytest.mark.skipif(not JIMINY, reason="set LINKDYN_JIMINY_PYTHON to an interpreter with "
                                       "jiminy-py (see jiminy_arm.py)")
def test_jiminy_form_against_jiminy():
    script = Path(__file__).with_name("jiminy_arm.py")
    run = subprocess.run([JIMINY, str(script), *map(str, FRACTIONS)], capture_output=True,
                         text=True, timeout=600, check=True)
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    for row in rows:
        r = linkdyn.simulate(arm("jiminy", 50.0, 0.5, row["fraction"]), 2.0, rtol=TOL,
                             atol=TOL, dt_out=0.01)
        i = r.model.body_names.index("arm")
        angle = np.unwrap(np.arctan2(r.q[:, 4 * i + 3], r.q[:, 4 * i + 2]))[-1]
        row.update(linkdyn_angle=float(angle), linkdyn_steps=r.stats["steps"],
                   linkdyn_integration_seconds=r.stats["integration_seconds"])
        if "error" not in row:
            assert abs(row["angle"] - angle) < 1e-6, row
    results = Path(__file__).parent / "results"
    results.mkdir(exist_ok=True)
    (results / "jiminy_flexible.json").write_text(json.dumps(rows, indent=2) + "\n")
    for row in rows:
        print(row)
