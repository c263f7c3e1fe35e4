"""Spatial bodies against planar ones (issue 27): a chain of n bars on spherical joints
(linkdyn.models.spatial.spatial_chain: bars with a frame, 12 coordinates and 9 rows each;
and rods, width 0, 6 coordinates and 4 rows each) against the planar chain of n bars on
revolute joints (linkdyn.chain, 4 coordinates and 3 rows per bar), from 10^2 to 10^4 bars, at
rtol = atol = 1e-6 with one output row: integration seconds per body and step of each, and
their ratios (the target: the chain of spatial pendulums within 3 times the planar one's
cost per body-step). The cost of a step is the difference of two runs, to T and to 3 T
(best of three each), over the difference of their steps: a run's set-up (the consistent
start, the factorisations' plans) is left out; over a short run it is most of the time.
Also the time to describe and compile both chains (10^3 and 10^4 bars), per bar, and its ratio.

Run:  python -m pytest benchmarks/test_bench_spatial.py -s
"""

import math

import pytest

import linkdyn
from linkdyn.models.spatial import spatial_chain

#: bars and the shorter run's span (s): some ten steps or more
SIZES = ((100, 0.1), (1_000, 0.01), (10_000, 2e-3))
_cost = {}


def _best(model, t_end):
    """(integration seconds, steps) of the fastest of three runs to t_end."""
    runs = [linkdyn.simulate(model, t_end, rtol=1e-6, atol=1e-6, t_out="final")
            for _ in range(3)]
    fastest = min(runs, key=lambda r: r.stats["integration_seconds"])
    return fastest.stats["integration_seconds"], fastest.stats["steps"]


@pytest.mark.parametrize("n, span", SIZES)
@pytest.mark.parametrize("family", ["planar", "spatial", "rods"])
def test_chain_cost_per_body_step(benchmark, family, n, span):
    length = 1.0 / math.sqrt(n)
    model = (linkdyn.chain(n, length=length) if family == "planar"
             else spatial_chain(n, length=length, width=0.0 if family == "rods" else 0.1))
    benchmark.group = f"chain of {n} bars"
    benchmark.extra_info["role"] = "baseline" if family == "planar" else "linkdyn"
    benchmark.pedantic(linkdyn.simulate, args=(model, span),
                       kwargs=dict(rtol=1e-6, atol=1e-6, t_out="final"), rounds=3,
                       iterations=1)
    (t1, s1), (t3, s3) = _best(model, span), _best(model, 3 * span)
    per = (t3 - t1) / ((s3 - s1) * n)
    _cost[(family, n)] = per
    benchmark.extra_info.update(steps=(s1, s3), seconds_per_body_step=per)
    if family != "planar" and ("planar", n) in _cost:
        ratio = per / _cost[("planar", n)]
        benchmark.extra_info[f"{family}_over_planar"] = ratio
        print(f"\n{n} bars: planar {_cost[('planar', n)] * 1e6:.3f} us, {family} "
              f"{per * 1e6:.3f} us per body-step: ratio {ratio:.2f}")


_build = {}


@pytest.mark.parametrize("n", (1_000, 10_000))
@pytest.mark.parametrize("family", ["planar", "spatial"])
def test_chain_build_per_body(benchmark, family, n):
    """Describing and compiling the chains above: seconds per bar, and the spatial chain's
    over the planar one's (a spatial bar has three times the coordinates and rows, its
    inertia and orientation are checked, and its rows are generic ones)."""
    length = 1.0 / math.sqrt(n)
    build = linkdyn.chain if family == "planar" else spatial_chain
    benchmark.group = f"chain of {n} bars, built"
    benchmark.extra_info["role"] = "baseline" if family == "planar" else "linkdyn"
    benchmark.pedantic(build, args=(n,), kwargs=dict(length=length), rounds=3, iterations=1)
    _build[(family, n)] = per = benchmark.stats.stats.min / n
    benchmark.extra_info["seconds_per_bar"] = per
    if ("planar", n) in _build and ("spatial", n) in _build:
        ratio = _build[("spatial", n)] / _build[("planar", n)]
        benchmark.extra_info["spatial_over_planar"] = ratio
        print(f"\n{n} bars built: planar {_build[('planar', n)] * 1e6:.1f} us, spatial "
              f"{_build[('spatial', n)] * 1e6:.1f} us per bar: ratio {ratio:.1f}")


@pytest.fixture(scope="module")
def top():
    """The heavy top, its 2 s run's output times (the tip every 1 ms) and the tip from a
    linkdyn run at rtol 1e-12, the reference both peers are measured against."""
    import numpy as np

    from linkdyn.models.spatial import heavy_top

    model, t = heavy_top(), np.arange(0.0, 2.0 + 1e-12, 1e-3)
    ref = linkdyn.simulate(model, 2.0, rtol=1e-12, atol=1e-12, t_out=t).marker("tip")
    return model, t, ref


def linkdyn_rows(top, tols) -> list:
    """Table rows of linkdyn on the heavy top: best time of 3 (integration and output)."""
    import numpy as np

    model, t, ref = top
    rows = []
    for tol in tols:
        runs = [linkdyn.simulate(model, t[-1], rtol=tol, atol=tol, t_out=t) for _ in range(3)]
        secs = min(r.stats["integration_seconds"] + r.stats["output_seconds"] for r in runs)
        err = float(np.abs(runs[0].marker("tip") - ref).max())
        rows.append(f"| linkdyn, rtol {tol:g} | {secs * 1e3:.1f} ms | {err:.1e} m |")
    return rows


def report(benchmark, top, peer, rows, tol) -> None:
    """Print and keep the table; time linkdyn at ``tol`` for pytest-benchmark's table."""
    model, t, _ = top
    table = "\n".join(["| code | time (2 s, 2001 tip rows) | tip error |", "|---|---|---|"]
                      + rows)
    print(f"\nheavy top against {peer}\n" + table)
    benchmark.group = "heavy top"
    benchmark.extra_info["table"] = table
    benchmark.pedantic(linkdyn.simulate, args=(model, t[-1]),
                       kwargs=dict(rtol=tol, atol=tol, t_out=t), rounds=3, iterations=1)


def test_heavy_top_against_mujoco(benchmark, top):
    """The heavy top (linkdyn.models.spatial) over 2 s, the tip recorded every 1 ms,
    against MuJoCo's RK4 (fixed step, a ball joint; the same body, initial state and
    gravity) when ``mujoco`` is installed. Error: the tip's largest distance from a linkdyn
    run at rtol 1e-12. Each code's time for each setting, and the table of both."""
    mujoco = pytest.importorskip("mujoco")
    import time

    import numpy as np

    from linkdyn.models.spatial import HEAVY_TOP

    d = HEAVY_TOP
    xml = (f'<mujoco><option gravity="0 0 {-d["g"]}" timestep="{{dt}}" integrator="RK4"/>'
           '<worldbody><body name="top"><joint type="ball"/>'
           f'<inertial pos="0 0 {d["l"]}" mass="{d["mass"]}" diaginertia="{d["transverse"]} '
           f'{d["transverse"]} {d["axial"]}"/><site name="tip" pos="0 0 {2 * d["l"]}"/>'
           '</body></worldbody></mujoco>')
    _, t, ref = top

    def mujoco_run(dt):
        m = mujoco.MjModel.from_xml_string(xml.format(dt=dt))
        data = mujoco.MjData(m)
        half = 0.5 * d["theta0"]            # the axis turned about y by theta0
        data.qpos[:] = [math.cos(half), 0.0, math.sin(half), 0.0]
        data.qvel[:] = [0.0, 0.0, d["spin"]]  # a ball joint's rate is in body axes
        mujoco.mj_forward(m, data)
        per, out = int(round(1e-3 / dt)), [data.site_xpos[0].copy()]
        start = time.perf_counter()
        for _ in range(len(t) - 1):
            mujoco.mj_step(m, data, nstep=per)
            out.append(data.site_xpos[0].copy())
        return time.perf_counter() - start, float(np.abs(np.array(out) - ref).max())

    rows = []
    for dt in (1e-3, 5e-4, 2e-4, 1e-4):
        secs, err = min(mujoco_run(dt) for _ in range(3))
        rows.append(f"| MuJoCo RK4, step {dt:g} s | {secs * 1e3:.1f} ms | {err:.1e} m |")
    report(benchmark, top, "MuJoCo", rows + linkdyn_rows(top, (1e-6, 1e-8, 1e-10)), 1e-8)


def exudyn_solve(mbs, sensor, t_end, steps, period) -> tuple:
    """Assemble an Exudyn system, run its implicit generalized-alpha integrator (its
    explicit ones refuse joints' algebraic equations) for ``steps`` fixed steps to ``t_end``
    with ``sensor`` stored every ``period``: (seconds of the solve, the sensor's rows)."""
    import time

    import exudyn as exu

    mbs.Assemble()
    settings = exu.SimulationSettings()
    settings.timeIntegration.numberOfSteps = steps
    settings.timeIntegration.endTime = t_end
    settings.timeIntegration.verboseMode = 0
    settings.solution.file.write = False
    settings.solution.sensors.writePeriod = period
    start = time.perf_counter()
    mbs.SolveDynamic(settings, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    return time.perf_counter() - start, mbs.GetSensorStoredData(sensor)[:, 1:4]


def exudyn_body(mbs, mass, moments, position, frame=None, velocity=(0.0, 0.0, 0.0),
                angular_velocity=(0.0, 0.0, 0.0), gravity=(0.0, 0.0, -9.81)):
    """An Exudyn rigid body on Euler parameters: its centre of mass at ``position``,
    principal ``moments`` along the columns of ``frame`` (global axes by default)."""
    import numpy as np
    from exudyn.utilities import RigidBodyInertia

    return mbs.CreateRigidBody(
        inertia=RigidBodyInertia(mass=mass, inertiaTensor=np.diag(moments)),
        referencePosition=list(position),
        referenceRotationMatrix=np.eye(3) if frame is None else np.asarray(frame),
        initialVelocity=list(velocity), initialAngularVelocity=list(angular_velocity),
        gravity=list(gravity))


def exudyn_position_sensor(mbs, body, local=(0.0, 0.0, 0.0)):
    """A stored sensor of the global position of ``body``'s point ``local``."""
    import exudyn as exu
    from exudyn.utilities import SensorBody

    return mbs.AddSensor(SensorBody(bodyNumber=body, localPosition=list(local),
                                    storeInternal=True,
                                    outputVariableType=exu.OutputVariableType.Position))


def gap(rows, ref) -> float:
    """Largest distance of a peer's output rows from the reference, over the rows both have."""
    import numpy as np

    n = min(len(rows), len(ref))
    return float(np.abs(np.asarray(rows)[:n] - np.asarray(ref)[:n]).max())


def test_heavy_top_against_exudyn(benchmark, top):
    """The heavy top against Exudyn (when installed): a rigid body on Euler parameters with
    a spherical joint, generalized-alpha at fixed steps (:func:`exudyn_solve`); the tip every
    1 ms over 2 s against a linkdyn run at rtol 1e-12."""
    exu = pytest.importorskip("exudyn")
    import numpy as np

    from linkdyn.models.spatial import HEAVY_TOP

    d = HEAVY_TOP
    _, t, ref = top
    axis = np.array([math.sin(d["theta0"]), 0.0, math.cos(d["theta0"])])
    ex = np.array([math.cos(d["theta0"]), 0.0, -math.sin(d["theta0"])])

    def exudyn_run(steps):
        sc = exu.SystemContainer()                 # holds the system: keep it alive
        mbs = sc.AddSystem()
        body = exudyn_body(mbs, d["mass"], (d["transverse"], d["transverse"], d["axial"]),
                           d["l"] * axis, np.column_stack([ex, np.cross(axis, ex), axis]),
                           angular_velocity=d["spin"] * axis, gravity=(0.0, 0.0, -d["g"]))
        ground = mbs.CreateGround(referencePosition=[0.0, 0.0, 0.0])
        mbs.CreateSphericalJoint(itemNumbers=[ground, body], position=[0.0, 0.0, 0.0])
        sensor = exudyn_position_sensor(mbs, body, (0.0, 0.0, d["l"]))
        secs, tip = exudyn_solve(mbs, sensor, t[-1], steps, 1e-3)
        return secs, gap(tip, ref)

    rows = []
    for steps in (2_000, 20_000, 200_000):
        secs, err = exudyn_run(steps)
        rows.append(f"| Exudyn generalized-alpha, {steps} steps | {secs * 1e3:.1f} ms | "
                    f"{err:.1e} m |")
    report(benchmark, top, "Exudyn", rows + linkdyn_rows(top, (1e-6, 1e-8)), 1e-6)


@pytest.fixture(scope="module")
def bricard_reference():
    """A04's output times (every 10 ms over 10 s) and P3 from the redundant-free twin at rtol
    1e-12 (an independent row set of the same motion): what every code is measured against."""
    import numpy as np

    from linkdyn.models.spatial import BRICARD_T_END, bricard

    t = np.linspace(0.0, BRICARD_T_END, 1001)
    return t, linkdyn.simulate(bricard(redundant_free=True), BRICARD_T_END, rtol=1e-12,
                               atol=1e-12, t_out=t).marker("P3")


def publish(benchmark, group, title, rows) -> None:
    """Print a table of rows under its title and keep it with the benchmark's group."""
    table = "\n".join(rows)
    print(f"\n{title}\n{table}")
    benchmark.group = group
    benchmark.extra_info["table"] = table


def bricard_rows(model, t, ref) -> list:
    """linkdyn's A04 rows (best of three runs) at rtol 1e-6, 1e-8 and 1e-10: time and P3's
    error against ``ref``."""
    import numpy as np

    from linkdyn.models.spatial import BRICARD_T_END

    rows = []
    for tol in (1e-6, 1e-8, 1e-10):
        runs = [linkdyn.simulate(model, BRICARD_T_END, rtol=tol, atol=tol, t_out=t,
                                 redundant="allow") for _ in range(3)]
        secs = min(r.stats["integration_seconds"] for r in runs)
        err = float(np.abs(runs[0].marker("P3") - ref).max())
        rows.append(f"| linkdyn, rtol {tol:g} | {secs * 1e3:.1f} ms | {err:.1e} m |")
    return rows


def test_bricard_a04(benchmark, bricard_reference):
    """IFToMM A04, Bricard's overconstrained linkage, over the benchmark's 10 s: linkdyn with
    its redundant row allowed, at rtol 1e-6 ... 1e-10, its point P3 against the redundant-free
    twin; beside the OpenSim implementation's published 0.258 s (an i5-4570, another machine:
    for scale only)."""
    from linkdyn.models.spatial import BRICARD_T_END, bricard

    t, ref = bricard_reference
    model = bricard()
    rows = ["| code | time (10 s) | P3 error |", "|---|---|---|",
            "| OpenSim (published, i5-4570) | 258 ms | - |"]
    rows += bricard_rows(model, t, ref)
    publish(benchmark, "bricard", "Bricard (IFToMM A04)", rows)
    benchmark.pedantic(linkdyn.simulate, args=(model, BRICARD_T_END),
                       kwargs=dict(rtol=1e-8, atol=1e-8, t_out=t, redundant="allow"),
                       rounds=3, iterations=1)


def bricard_mjcf(dt: float) -> str:
    """A04 in MuJoCo: two open chains from the ground (J1-J2-J3 and J6-J5) carrying the five
    rods (1 kg, 1 m, square section 0.1 m, as linkdyn's ``bricard``), the loop closed at J4 by
    two point constraints on its axis (a hinge: five rows and a redundant sixth, which MuJoCo's
    soft constraints accept), stiffened to a time constant of 2 dt (MuJoCo's shortest stable
    one; its default, 0.02 s, leaves P3 2e-3 m off); RK4 at step dt, contacts off."""
    axial, transverse = 2 * 0.1**2 / 12, (1 + 0.1**2) / 12

    def rod(centre, along):
        moments = [transverse] * 3
        moments[along] = axial
        return (f'<inertial pos="{centre}" mass="1" '
                f'diaginertia="{moments[0]} {moments[1]} {moments[2]}"/>')

    solref = f'solref="{2 * dt} 1"'
    return (f'<mujoco><option gravity="0 -9.81 0" timestep="{dt}" integrator="RK4">'
            '<flag contact="disable"/></option><worldbody>'
            f'<body name="rod1"><joint type="hinge" axis="0 1 0"/>{rod("0.5 0 0", 0)}'
            f'<body name="rod2" pos="1 0 0"><joint type="hinge" axis="0 0 1"/>'
            f'{rod("0 -0.5 0", 1)}<site name="P3" pos="0 -1 0"/>'
            f'<body name="rod3" pos="0 -1 0"><joint type="hinge" axis="1 0 0"/>'
            f'{rod("0 0 0.5", 2)}</body></body></body>'
            f'<body name="rod5" pos="0 0 1"><joint type="hinge" axis="1 0 0"/>'
            f'{rod("0 -0.5 0", 1)}<body name="rod4" pos="0 -1 0">'
            f'<joint type="hinge" axis="0 0 1"/>{rod("0.5 0 0", 0)}</body></body>'
            '</worldbody><equality>'
            f'<connect body1="rod3" body2="rod4" anchor="0 0 1" {solref}/>'
            f'<connect body1="rod3" body2="rod4" anchor="0 0.5 1" {solref}/>'
            '</equality></mujoco>')


def test_bricard_a04_against_mujoco(benchmark, bricard_reference):
    """A04 over 10 s in MuJoCo (:func:`bricard_mjcf`, when installed) at four steps, beside
    linkdyn at three tolerances, P3 measured against the same reference every 10 ms: time
    and error of each, in one table."""
    mujoco = pytest.importorskip("mujoco")
    import time

    import numpy as np

    from linkdyn.models.spatial import bricard

    t, ref = bricard_reference

    def mujoco_run(dt):
        m = mujoco.MjModel.from_xml_string(bricard_mjcf(dt))
        data = mujoco.MjData(m)
        mujoco.mj_forward(m, data)
        per, out = int(round((t[1] - t[0]) / dt)), [data.site_xpos[0].copy()]
        start = time.perf_counter()
        for _ in range(len(t) - 1):
            mujoco.mj_step(m, data, nstep=per)
            out.append(data.site_xpos[0].copy())
        return time.perf_counter() - start, float(np.abs(np.array(out) - ref).max())

    rows = ["| code | time (10 s) | P3 error |", "|---|---|---|"]
    for dt in (1e-3, 5e-4, 2e-4, 1e-4):
        secs, err = min(mujoco_run(dt) for _ in range(3))
        rows.append(f"| MuJoCo RK4, step {dt:g} s | {secs * 1e3:.0f} ms | {err:.1e} m |")
    model = bricard()
    rows += bricard_rows(model, t, ref)
    publish(benchmark, "bricard mujoco", "Bricard (IFToMM A04) against MuJoCo", rows)
    benchmark.pedantic(mujoco_run, args=(1e-3,), rounds=1, iterations=1)


def test_bricard_a04_against_exudyn(benchmark, bricard_reference):
    """A04 over 10 s in Exudyn (when installed): the five rods as rigid bodies on Euler
    parameters, revolute joints J1-J5 and at J6 a generic joint that keeps the revolute's
    rows but its redundant one (the rotation about y, as linkdyn's redundant-free twin), by
    generalized-alpha at three fixed steps (:func:`exudyn_solve`), beside linkdyn at three
    tolerances; P3 against the same reference every 10 ms."""
    exu = pytest.importorskip("exudyn")
    import numpy as np

    from linkdyn.models.spatial import BRICARD_T_END, bricard

    t, ref = bricard_reference
    corners = np.array([(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (1.0, -1.0, 0.0), (1.0, -1.0, 1.0),
                        (0.0, -1.0, 1.0), (0.0, 0.0, 1.0)])
    axes = ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0),
            (0.0, 0.0, 1.0))

    def exudyn_run(steps):
        sc = exu.SystemContainer()
        mbs = sc.AddSystem()
        chain = [mbs.CreateGround(referencePosition=[0.0, 0.0, 0.0])]
        for k in range(5):
            along = int(np.argmax(np.abs(corners[k + 1] - corners[k])))
            moments = [(1.0 + 0.1**2) / 12.0] * 3          # 1 kg, 1 m, square 0.1 m
            moments[along] = 2.0 * 0.1**2 / 12.0
            chain.append(exudyn_body(mbs, 1.0, moments, (corners[k] + corners[k + 1]) / 2,
                                     gravity=(0.0, -9.81, 0.0)))
            mbs.CreateRevoluteJoint(itemNumbers=[chain[k + 1], chain[k]],
                                    position=list(corners[k]), axis=list(axes[k]))
        mbs.CreateGenericJoint(itemNumbers=[chain[5], chain[0]], position=list(corners[5]),
                               constrainedAxes=[1, 1, 1, 0, 1, 0])
        sensor = exudyn_position_sensor(mbs, chain[2], (0.0, -0.5, 0.0))
        secs, p3 = exudyn_solve(mbs, sensor, BRICARD_T_END, steps, t[1] - t[0])
        return secs, gap(p3, ref)

    rows = ["| code | time (10 s) | P3 error |", "|---|---|---|"]
    for steps in (1_000, 10_000, 100_000):
        secs, err = exudyn_run(steps)
        rows.append(f"| Exudyn generalized-alpha, {steps} steps | {secs * 1e3:.0f} ms | "
                    f"{err:.1e} m |")
    rows += bricard_rows(bricard(), t, ref)
    publish(benchmark, "bricard exudyn", "Bricard (IFToMM A04) against Exudyn", rows)
    benchmark.pedantic(exudyn_run, args=(1_000,), rounds=1, iterations=1)


@pytest.fixture(scope="module")
def flyball_reference():
    """A05's output times (every 10 ms over 10 s) and the slider's height s from a BDF run
    at rtol 1e-12: what every code is measured against."""
    import numpy as np

    from linkdyn.models.spatial import FLYBALL_T_END, flyball_governor

    t = np.linspace(0.0, FLYBALL_T_END, 1001)
    return t, linkdyn.simulate(flyball_governor(), FLYBALL_T_END, rtol=1e-12, atol=1e-12,
                               t_out=t, method="bdf").marker("S")[:, 2]


def flyball_rows(t, ref) -> list:
    """linkdyn's A05 rows (BDF, best of three runs) at rtol 1e-6, 1e-8 and 1e-10: time and
    the slider height's error against ``ref``."""
    import numpy as np

    from linkdyn.models.spatial import FLYBALL_T_END, flyball_governor

    model, rows = flyball_governor(), []
    for tol in (1e-6, 1e-8, 1e-10):
        runs = [linkdyn.simulate(model, FLYBALL_T_END, rtol=tol, atol=tol, t_out=t,
                                 method="bdf") for _ in range(3)]
        secs = min(r.stats["integration_seconds"] for r in runs)
        err = float(np.abs(runs[0].marker("S")[:, 2] - ref).max())
        rows.append(f"| linkdyn BDF, rtol {tol:g} | {secs * 1e3:.1f} ms | {err:.1e} m |")
    return rows


def test_flyball_governor_a05(benchmark):
    """IFToMM A05, the stiff flyball governor, over the benchmark's 10 s: the slider's height
    s against a BDF run at rtol 1e-12, with the BDF at three tolerances and the default
    method at one (its cost trials hand the run to the BDF)."""
    import numpy as np

    from linkdyn.models.spatial import FLYBALL_T_END, flyball_governor

    model = flyball_governor()
    t = np.linspace(0.0, FLYBALL_T_END, 1001)
    ref = linkdyn.simulate(model, FLYBALL_T_END, rtol=1e-12, atol=1e-12, t_out=t,
                           method="bdf").marker("S")[:, 2]
    rows = ["| method | time (10 s) | steps | s error |", "|---|---|---|---|"]
    for method, tol in (("bdf", 1e-6), ("bdf", 1e-8), ("bdf", 1e-10), ("auto", 1e-6)):
        runs = [linkdyn.simulate(model, FLYBALL_T_END, rtol=tol, atol=tol, t_out=t,
                                 method=method) for _ in range(2 if method == "auto" else 3)]
        secs = min(r.stats["integration_seconds"] for r in runs)
        err = float(np.abs(runs[0].marker("S")[:, 2] - ref).max())
        rows.append(f"| {method}, rtol {tol:g} | {secs * 1e3:.1f} ms | "
                    f"{runs[0].stats['steps']} | {err:.1e} m |")
    publish(benchmark, "flyball governor", "Flyball governor (IFToMM A05)", rows)
    benchmark.pedantic(linkdyn.simulate, args=(model, FLYBALL_T_END),
                       kwargs=dict(rtol=1e-8, atol=1e-8, t_out=t, method="bdf"),
                       rounds=3, iterations=1)


def flyball_mjcf(dt: float) -> str:
    """A05 in MuJoCo: the same bodies (linkdyn.models.spatial.FLYBALL) on a hinge (the shaft
    about z), a slide (the slider on it) and two hinges (the rods about y at the shaft's top,
    each carrying its ball on a body of its own), the spring-dampers as spatial tendons with
    stiffness, damping and rest length; RK4 at step dt, contacts off."""
    import math

    from linkdyn.models.spatial import FLYBALL

    d = FLYBALL
    rho, L, w, c = d["density"], d["length"], d["side"], d["cube"]
    m_bar, m_cube = rho * L * w * w, rho * c**3
    axial, transverse, cube = m_bar * w * w / 6.0, m_bar * (L * L + w * w) / 12.0, \
        m_cube * c * c / 6.0
    rods = ""
    for k, side in ((1, 1.0), (2, -1.0)):
        dx, dz = side * math.cos(d["alpha"]), -math.sin(d["alpha"])
        # the rod's inertia about its middle, its axis along (dx, 0, dz), in shaft axes
        full = (f"{transverse * dz * dz + axial * dx * dx} {transverse} "
                f"{transverse * dx * dx + axial * dz * dz} 0 {(axial - transverse) * dx * dz} 0")
        rods += (f'<body name="rod{k}" pos="{side * d["hinge"]} 0 {L / 2}">'
                 '<joint type="hinge" axis="0 1 0"/>'
                 f'<inertial pos="{dx * L / 2} 0 {dz * L / 2}" mass="{m_bar}" '
                 f'fullinertia="{full}"/><site name="mid{k}" pos="{dx * L / 2} 0 {dz * L / 2}"/>'
                 f'<body name="ball{k}" pos="{dx * L} 0 {dz * L}"><inertial pos="0 0 0" '
                 f'mass="{d["ball"]}" diaginertia="1e-9 1e-9 1e-9"/></body></body>')
    tendons = "".join(
        f'<spatial stiffness="{d["stiffness"]}" damping="{d["damping"]}" '
        f'springlength="{d["rest"]}"><site site="side{k}"/><site site="mid{k}"/></spatial>'
        for k in (1, 2))
    return (f'<mujoco><option gravity="0 0 {-d["g"]}" timestep="{dt}" integrator="RK4">'
            '<flag contact="disable"/></option><worldbody>'
            f'<body name="shaft" pos="0 0 {L / 2}"><joint type="hinge" axis="0 0 1"/>'
            f'<inertial pos="0 0 0" mass="{m_bar}" diaginertia="{transverse} {transverse} '
            f'{axial}"/><body name="slider" pos="0 0 {d["s0"] - L / 2}">'
            f'<joint type="slide" axis="0 0 1"/><inertial pos="0 0 0" mass="{m_cube}" '
            f'diaginertia="{cube} {cube} {cube}"/><site name="side1" pos="{c / 2} 0 0"/>'
            f'<site name="side2" pos="{-c / 2} 0 0"/><site name="S"/></body>{rods}</body>'
            f'</worldbody><tendon>{tendons}</tendon></mujoco>')


def test_flyball_governor_a05_against_mujoco(benchmark, flyball_reference):
    """A05 over 10 s in MuJoCo (:func:`flyball_mjcf`, when installed), RK4 at the steps
    where it is stable (the dampers' mode, about -8,000/s, needs dt below some 2.5e-4 s),
    beside linkdyn's BDF, the slider's height against the same linkdyn reference."""
    mujoco = pytest.importorskip("mujoco")
    import time

    import numpy as np

    from linkdyn.models.spatial import FLYBALL

    t, ref = flyball_reference

    def mujoco_run(dt):
        m = mujoco.MjModel.from_xml_string(flyball_mjcf(dt))
        data = mujoco.MjData(m)
        data.qvel[0] = FLYBALL["omega"]                   # the shaft (the rest turns with it)
        mujoco.mj_forward(m, data)
        site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "S")
        per, out = int(round((t[1] - t[0]) / dt)), [data.site_xpos[site][2]]
        start = time.perf_counter()
        for _ in range(len(t) - 1):
            mujoco.mj_step(m, data, nstep=per)
            out.append(data.site_xpos[site][2])
        return time.perf_counter() - start, float(np.abs(np.array(out) - ref).max())

    rows = ["| code | time (10 s) | s error |", "|---|---|---|"]
    for dt in (2e-4, 1e-4):
        secs, err = min(mujoco_run(dt) for _ in range(2))
        rows.append(f"| MuJoCo RK4, step {dt:g} s | {secs * 1e3:.0f} ms | {err:.1e} m |")
    rows += flyball_rows(t, ref)
    publish(benchmark, "flyball governor mujoco", "Flyball governor (IFToMM A05) against MuJoCo",
            rows)
    benchmark.pedantic(mujoco_run, args=(2e-4,), rounds=1, iterations=1)


def test_flyball_governor_a05_against_exudyn(benchmark, flyball_reference):
    """A05 over 10 s in Exudyn (when installed): the same bodies (the rods with their balls
    folded in, as linkdyn's ``flyball_governor``) on revolute and prismatic joints, the
    spring-dampers as Exudyn's, generalized-alpha (implicit: stable at any step) at three
    fixed steps (:func:`exudyn_solve`), beside linkdyn's BDF; the slider's height against
    the same reference every 10 ms."""
    exu = pytest.importorskip("exudyn")
    import numpy as np

    from linkdyn.models.spatial import FLYBALL, FLYBALL_T_END

    t, ref = flyball_reference
    d = FLYBALL
    rho, L, w, c = d["density"], d["length"], d["side"], d["cube"]
    m_bar, m_cube, m_ball = rho * L * w * w, rho * c**3, d["ball"]
    axial, transverse = m_bar * w * w / 6.0, m_bar * (L * L + w * w) / 12.0
    mass = m_bar + m_ball
    at = (m_bar * L / 2 + m_ball * L) / mass          # the rod's centre of mass from its hinge
    across = transverse + m_bar * (at - L / 2) ** 2 + m_ball * (L - at) ** 2
    omega, g = np.array([0.0, 0.0, d["omega"]]), (0.0, 0.0, -d["g"])

    def exudyn_run(steps):
        sc = exu.SystemContainer()
        mbs = sc.AddSystem()
        ground = mbs.CreateGround(referencePosition=[0.0, 0.0, 0.0])
        shaft = exudyn_body(mbs, m_bar, (transverse, transverse, axial), (0.0, 0.0, L / 2),
                            angular_velocity=omega, gravity=g)
        mbs.CreateRevoluteJoint(itemNumbers=[shaft, ground], position=[0.0, 0.0, 0.0],
                                axis=[0.0, 0.0, 1.0])
        slider = exudyn_body(mbs, m_cube, (m_cube * c * c / 6.0,) * 3, (0.0, 0.0, d["s0"]),
                             angular_velocity=omega, gravity=g)
        mbs.CreatePrismaticJoint(itemNumbers=[slider, shaft], position=[0.0, 0.0, d["s0"]],
                                 axis=[0.0, 0.0, 1.0])
        for side in (1.0, -1.0):
            along = np.array([side * math.cos(d["alpha"]), 0.0, -math.sin(d["alpha"])])
            hinge = np.array([side * d["hinge"], 0.0, L])
            centre = hinge + at * along
            frame = np.column_stack([along, [0.0, 1.0, 0.0], np.cross(along, [0.0, 1.0, 0.0])])
            rod = exudyn_body(mbs, mass, (axial, across, across), centre, frame,
                              velocity=np.cross(omega, centre), angular_velocity=omega,
                              gravity=g)
            mbs.CreateRevoluteJoint(itemNumbers=[rod, shaft], position=list(hinge),
                                    axis=[0.0, 1.0, 0.0])
            mbs.CreateSpringDamper(itemNumbers=[slider, rod], localPosition0=[side * c / 2,
                                                                                 0.0, 0.0],
                                   localPosition1=[L / 2 - at, 0.0, 0.0],
                                   referenceLength=d["rest"], stiffness=d["stiffness"],
                                   damping=d["damping"])
        sensor = exudyn_position_sensor(mbs, slider)
        secs, s = exudyn_solve(mbs, sensor, FLYBALL_T_END, steps, t[1] - t[0])
        return secs, gap(s[:, 2], ref)

    rows = ["| code | time (10 s) | s error |", "|---|---|---|"]
    for steps in (1_000, 10_000, 100_000):
        secs, err = exudyn_run(steps)
        rows.append(f"| Exudyn generalized-alpha, {steps} steps | {secs * 1e3:.0f} ms | "
                    f"{err:.1e} m |")
    rows += flyball_rows(t, ref)
    publish(benchmark, "flyball governor exudyn",
            "Flyball governor (IFToMM A05) against Exudyn", rows)
    benchmark.pedantic(exudyn_run, args=(1_000,), rounds=1, iterations=1)
