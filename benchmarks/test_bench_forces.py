"""Force elements: a chain of bars with a torsional spring-damper at every joint, 1 s at
rtol = atol = 1e-8, linkdyn's simulate against SciPy's LSODA on the sparse index-1 form of
the same model (the same kernels; SuperLU for the KKT solves) in the same run.

LSODA's stiff mode builds its Jacobian by finite differences over all 2 nq states, so the
baseline is run on the 100-bar chain; the 1,000-bar chain is timed for linkdyn alone unless
LINKDYN_BENCH_FULL=1 (then the baseline runs too: expect many minutes).
"""

import os

import pytest

import linkdyn
from index1_baseline import run

TOL = 1e-8
FULL = os.environ.get("LINKDYN_BENCH_FULL") == "1"


def sprung_chain(n):
    return linkdyn.chain(n, joint_stiffness=0.05, joint_damping=1e-3)


@pytest.mark.parametrize("n", [100, 1000])
def test_chain_springs_linkdyn(benchmark, n):
    model = sprung_chain(n)
    benchmark.group = f"chain {n} bars, joint springs, 1 s rtol 1e-8"
    benchmark.extra_info["role"] = "linkdyn"
    result = benchmark.pedantic(linkdyn.simulate, args=(model, 1.0),
                                kwargs=dict(rtol=TOL, atol=TOL, dt_out=0.01),
                                rounds=3 if n <= 100 else 1, iterations=1)
    s = result.stats
    benchmark.extra_info.update(steps=s["steps"], newton_iterations=s["newton_iterations"],
                                integration_seconds=s["integration_seconds"],
                                energy_balance=float(abs(result.energy - result.energy[0]
                                                         - result.work).max()))


@pytest.mark.parametrize("n", [100, 1000])
def test_chain_springs_scipy_lsoda(benchmark, n):
    if n > 100 and not FULL:
        pytest.skip("the 1,000-bar LSODA baseline takes very long: LINKDYN_BENCH_FULL=1")
    model = sprung_chain(n)
    benchmark.group = f"chain {n} bars, joint springs, 1 s rtol 1e-8"
    benchmark.extra_info["role"] = "baseline"
    sol = benchmark.pedantic(run, args=(model, 1.0, TOL, TOL, "LSODA", None, True),
                             rounds=1, iterations=1)
    benchmark.extra_info.update(evaluations=int(sol.nfev))


def pd_pendulum():
    b = linkdyn.ModelBuilder("pd", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_motor("motor", "pin")
    b.add_servo("servo", "pin", -1.0, 20.0, 2.0)
    return b.build()


def pd(t, state):
    theta, rate = state.element_coordinate("motor")
    return {"motor": 20.0 * (-1.0 - theta) - 2.0 * rate}


@pytest.mark.parametrize("period", [None, 1e-2, 1e-3])
def test_controller_cost_per_sample(benchmark, period):
    """A servo-held pendulum alone (no samples), and with a Python PD controller adding its
    motor torque at 100 Hz and 1 kHz: the time difference per sample is what a sample costs
    (the call into Python plus the integrator's restart after each change of input)."""
    model = pd_pendulum()
    benchmark.group = "controller, pendulum 2 s rtol 1e-8"
    kwargs = dict(rtol=TOL, atol=TOL, dt_out=0.01)
    if period is not None:
        kwargs.update(controller=pd, control_period=period)
    result = benchmark.pedantic(linkdyn.simulate, args=(model, 2.0), kwargs=kwargs, rounds=3,
                                iterations=1)
    s = result.stats
    benchmark.extra_info.update(steps=s["steps"], samples=s.get("controller_samples", 0),
                                restarts=s.get("controller_restarts", 0),
                                controller_seconds=s.get("controller_seconds", 0.0))
