"""Static friction that holds: a block resting on a 20 degree incline (mu0 = 0.5 > tan 20 deg
= 0.364) for 10 s. linkdyn's sticking contact is a constraint (the block_on_incline
built-in); MuJoCo's soft contact (if ``mujoco`` is installed) lets a loaded contact creep.
Reported: the drift along the slope after 10 s (extra_info "drift_m") and the wall time;
the group's speed-up is linkdyn's time against MuJoCo's at its default 2 ms step."""

import math

import numpy as np
import pytest

import linkdyn

ALPHA = math.radians(20.0)
T_END = 10.0


def _along(xy):
    return xy[0] * math.cos(ALPHA) + xy[1] * math.sin(ALPHA)


@pytest.mark.benchmark(group="block-creep")
def test_block_creep_linkdyn(benchmark):
    model = linkdyn.load_model("block_on_incline")

    def run():
        return linkdyn.simulate(model, T_END, rtol=1e-10, atol=1e-12, t_out=[0.0, T_END])

    r = benchmark(run)
    drift = abs(_along(r.q[-1, :2]) - _along(r.q[0, :2]))
    benchmark.extra_info.update(role="linkdyn", drift_m=drift, steps=r.stats["steps"])
    print(f"\nlinkdyn: drift after {T_END} s {drift:.3e} m ({r.stats['steps']} steps)")
    assert drift < 1e-9


MJCF = """
<mujoco>
  <option timestep="{dt}" gravity="{gx} 0 {gz}"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1" friction="0.5 0.005 0.0001"/>
    <body pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="1" friction="0.5 0.005 0.0001"/>
    </body>
  </worldbody>
</mujoco>
"""


def _mujoco_block(dt):
    mujoco = pytest.importorskip("mujoco")
    # The incline as a tilted gravity on a level floor: x down the slope.
    xml = MJCF.format(dt=dt, gx=9.81 * math.sin(ALPHA), gz=-9.81 * math.cos(ALPHA))
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    # Let the contact settle for 1 s, then measure the drift over T_END.
    n_settle = int(round(1.0 / dt))
    mujoco.mj_step(model, data, nstep=n_settle)
    return mujoco, model, data


@pytest.mark.parametrize("dt", [2e-3, 2e-4])
def test_block_creep_mujoco(benchmark, dt):
    mujoco, model, data = _mujoco_block(dt)
    state0 = (data.qpos.copy(), data.qvel.copy())
    steps = int(round(T_END / dt))

    def run():
        data.qpos[:], data.qvel[:] = state0
        x0 = float(data.qpos[0])
        mujoco.mj_step(model, data, nstep=steps)
        return float(data.qpos[0]) - x0

    benchmark.group = "block-creep" if dt == 2e-3 else f"block-creep-mujoco-dt{dt:g}"
    drift = abs(benchmark(run))
    benchmark.extra_info.update(role="baseline" if dt == 2e-3 else "reference",
                                drift_m=drift, timestep=dt)
    print(f"\nMuJoCo {mujoco.__version__} (soft contact, dt {dt:g} s): drift after {T_END} s "
          f"{drift:.3e} m")
    assert np.isfinite(drift)
