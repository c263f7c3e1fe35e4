"""The flexible one-joint arm of test_bench_flexible.py simulated by Jiminy (jiminy-py), run
in an interpreter of its own: jiminy-py pins an older numpy than linkdyn's environment has.

    python -m venv /tmp/jiminy && /tmp/jiminy/bin/pip install jiminy-py
    /tmp/jiminy/bin/python benchmarks/jiminy_arm.py 1e-2 1e-4 ...   # fractions I_f / I

Prints one JSON object per fraction: wall time of engine.simulate (s), the number of
integrator steps, the output angle at 2 s (rad, the arm's angle from the horizontal,
counter-clockwise in the arm's plane), or the error Jiminy raised. Jiminy's flexibility is
a spherical joint placed before the motor joint (the note's Figure 1b) with the same
stiffness, damping and inertia about all three axes; the motion stays in the plane.
"""

import json
import math
import os
import sys
import tempfile
import time

import numpy as np

import jiminy_py.core as jiminy

K, NU, J, I, TOL = 50.0, 0.5, 0.05, 1.0 / 3.0, 1e-8

# Arm of 1 m and 1 kg along x, pinned at the origin; the joint turns about -y so that a
# positive angle lifts the arm towards +z (gravity is -z): the planar convention.
URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="0.5 0 0" rpy="0 0 0"/>
      <mass value="1.0"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="0.08333333333333333" iyz="0"
               izz="0.08333333333333333"/>
    </inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="arm"/>
    <origin xyz="0 0 0" rpy="0 0 0"/>
    <axis xyz="0 -1 0"/>
    <limit lower="-100" upper="100" effort="1000" velocity="1000"/>
  </joint>
</robot>
"""


def simulate(fraction):
    path = os.path.join(tempfile.mkdtemp(), "arm.urdf")
    with open(path, "w") as f:
        f.write(URDF)
    robot = jiminy.Robot()
    robot.initialize(path, has_freeflyer=False)
    motor = jiminy.SimpleMotor("shoulder")
    robot.attach_motor(motor)
    motor.initialize("shoulder")
    opts = robot.get_options()
    opts["motors"]["shoulder"]["enableArmature"] = True
    opts["motors"]["shoulder"]["armature"] = J
    opts["model"]["joints"]["enablePositionLimit"] = False
    opts["model"]["joints"]["enableVelocityLimit"] = False
    opts["model"]["dynamics"]["enableFlexibility"] = True
    opts["model"]["dynamics"]["flexibilityConfig"] = [{
        "frameName": "shoulder", "stiffness": np.full(3, K), "damping": np.full(3, NU),
        "inertia": np.full(3, fraction * I)}]
    robot.set_options(opts)

    def command(t, q, v, sensors, u):
        u[0] = 4.0 * math.sin(3.0 * t)

    robot.controller = jiminy.FunctionalController(command)
    engine = jiminy.Engine()
    engine.add_robot(robot)
    eo = engine.get_options()
    eo["stepper"]["odeSolver"] = "runge_kutta_dopri"
    eo["stepper"]["tolAbs"] = TOL
    eo["stepper"]["tolRel"] = TOL
    eo["telemetry"]["logInternalStepperSteps"] = True
    engine.set_options(eo)
    q0 = np.zeros(robot.pinocchio_model.nq)
    q0[3] = 1.0   # the flexibility's quaternion (x, y, z, w) at identity
    start = time.perf_counter()
    engine.simulate(2.0, q0, np.zeros(robot.pinocchio_model.nv))
    wall = time.perf_counter() - start
    var = engine.log_data["variables"]
    qy, qw = var["currentPositionshoulderFlexibilityQuatY"], var["currentPositionshoulderFlexibilityQuatW"]
    # The flexibility turns about +y, the joint about -y: output = joint - flexibility.
    angle = var["currentPositionshoulder"][-1] - 2.0 * math.atan2(qy[-1], qw[-1])
    return dict(wall=wall, steps=int(len(var["Global.Time"]) - 1), angle=float(angle))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        fraction = float(arg)
        try:
            out = simulate(fraction)
        except Exception as exc:   # Jiminy refuses small inertias: report, go on
            out = dict(error=f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1]}")
        print(json.dumps(dict(fraction=fraction, **out)), flush=True)
