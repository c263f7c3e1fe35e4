"""URDF, SDFormat and MJCF joint limits read as joint stops when ``stops=`` gives their law
(linkdyn.exchange.urdf, .sdf and .mjcf; linkdyn.elements.stops): a one-link pendulum
against its lower limit, written in either format, bounces as the planar pendulum with the
same stop does; the range counts from the file's zero when ``initial`` (or MJCF's ``ref``)
moves the start; bad options are refused."""

import math
import warnings

import numpy as np
import pytest

import linkdyn
from test_stops import LIMIT, pendulum

URDF = f"""<?xml version="1.0"?>
<robot name="pendulum">
  <link name="base"/>
  <link name="rod">
    <inertial><origin xyz="0.5 0 0"/><mass value="1.0"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="{1 / 12}" iyz="0" izz="{1 / 12}"/></inertial>
  </link>
  <joint name="pin" type="revolute"><parent link="base"/><child link="rod"/>
    <axis xyz="0 0 1"/><limit lower="{LIMIT}" upper="1.0" effort="1" velocity="1"/></joint>
</robot>
"""
LAW = dict(stiffness=1e5, model="lankarani_nikravesh", restitution=0.9)


def load(tmp_path, **options):
    path = tmp_path / "pendulum.urdf"
    path.write_text(URDF)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)    # nothing left unread
        return linkdyn.load_model(path, gravity=(0.0, -9.81, 0.0), **options)


def test_a_urdf_pendulum_bounces_off_its_limit_as_the_planar_one_does(tmp_path):
    model = load(tmp_path, stops=LAW)
    assert [s.name for s in model.description.stops] == ["pin/limits"]
    t = np.linspace(0.0, 1.0, 11)
    urdf = linkdyn.simulate(model, 1.0, rtol=1e-10, t_out=t)
    law = {k: v for k, v in LAW.items() if k != "stiffness"}    # pendulum() gives 1e5
    planar = linkdyn.simulate(pendulum(**law).build(), 1.0, rtol=1e-10, t_out=t)
    np.testing.assert_allclose(urdf.body_position("rod")[:, :2], planar.body_position("rod"),
                               atol=1e-6)
    assert [e.name for e in urdf.events] == ["pin/limits/lower"] * len(planar.events)
    assert np.abs(urdf.stop_force("pin/limits") - planar.stop_force("stop")).max() < 1e-3


def test_the_range_counts_from_the_files_zero(tmp_path):
    # started at 0.5 rad, the stop's lower end is LIMIT - 0.5 from the start
    model = load(tmp_path, stops=LAW, initial={"pin": 0.5})
    stop = model.description.stops[0]
    assert (stop.lower, stop.upper) == pytest.approx((LIMIT - 0.5, 0.5))
    with pytest.raises(linkdyn.ModelFileError, match=r"<limit>.*joint stop 'pin/limits'.*"
                                                     r"outside the range"):
        load(tmp_path, stops=LAW, initial={"pin": 1.2})


def test_bad_stop_options_are_refused(tmp_path):
    with pytest.raises(linkdyn.ArgumentError, match="stops must be a dict with stiffness"):
        load(tmp_path, stops=dict(restitution=0.9))
    path = tmp_path / "pendulum.urdf"
    path.write_text(URDF)
    with pytest.warns(linkdyn.ModelWarning, match=r"joint limits \(1: pin\)"):
        linkdyn.load_model(path)


MJCF = f"""<mujoco model="pendulum">
  <option gravity="0 -9.81 0"/>
  <worldbody>
    <body name="rod">
      <joint name="pin" type="hinge" axis="0 0 1" range="{math.degrees(LIMIT)} 57.3"
             REF/>
      <inertial pos="0.5 0 0" mass="1" diaginertia="1e-4 {1 / 12} {1 / 12}"/>
    </body>
  </worldbody>
</mujoco>
"""


def load_mjcf(tmp_path, ref="", **options):
    path = tmp_path / "pendulum.xml"
    path.write_text(MJCF.replace("REF", ref))
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)
        return linkdyn.load_model(path, **options)


def test_an_mjcf_pendulum_bounces_off_its_range_as_the_planar_one_does(tmp_path):
    # the range in degrees (the compiler's default unit), limited by autolimits
    model = load_mjcf(tmp_path, stops=LAW)
    stop = model.description.stops[0]
    assert (stop.lower, stop.upper) == pytest.approx((LIMIT, math.radians(57.3)))
    t = np.linspace(0.0, 1.0, 11)
    mjcf = linkdyn.simulate(model, 1.0, rtol=1e-10, t_out=t)
    law = {k: v for k, v in LAW.items() if k != "stiffness"}
    planar = linkdyn.simulate(pendulum(**law).build(), 1.0, rtol=1e-10, t_out=t)
    np.testing.assert_allclose(mjcf.body_position("rod")[:, :2], planar.body_position("rod"),
                               atol=1e-6)


def test_an_mjcf_range_counts_from_its_ref_and_initial(tmp_path):
    # ref = 10 degrees: the file's pose is qpos 10 degrees; started at qpos 0.5 rad
    model = load_mjcf(tmp_path, ref='ref="10"', stops=LAW, initial={"pin": 0.5})
    stop = model.description.stops[0]
    assert (stop.lower, stop.upper) == pytest.approx((LIMIT - 0.5, math.radians(57.3) - 0.5))
    with pytest.warns(linkdyn.ModelWarning, match=r"joint limits \(1: pin\)"):
        linkdyn.load_model(tmp_path / "pendulum.xml")
    with pytest.raises(linkdyn.ArgumentError, match="URDF, SDFormat and MJCF files"):
        linkdyn.load_model("jansen", stops=LAW)


SDF = f"""<?xml version="1.0"?>
<sdf version="1.7">
  <model name="pendulum">
    <link name="rod">
      <inertial><pose>0.5 0 0 0 0 0</pose><mass>1.0</mass>
        <inertia><ixx>1e-4</ixx><iyy>{1 / 12}</iyy><izz>{1 / 12}</izz></inertia></inertial>
    </link>
    <joint name="pin" type="revolute"><parent>world</parent><child>rod</child>
      <axis><xyz>0 0 1</xyz><limit><lower>{LIMIT}</lower><upper>1e16</upper></limit></axis>
    </joint>
  </model>
</sdf>
"""


def test_an_sdformat_pendulum_bounces_off_its_limit_as_the_planar_one_does(tmp_path):
    path = tmp_path / "pendulum.sdf"
    path.write_text(SDF)
    with warnings.catch_warnings():
        warnings.simplefilter("error", linkdyn.ModelWarning)
        model = linkdyn.load_model(path, gravity=(0.0, -9.81, 0.0), stops=LAW)
    stop = model.description.stops[0]
    assert (stop.lower, stop.upper) == (pytest.approx(LIMIT), None)     # 1e16: no bound
    t = np.linspace(0.0, 1.0, 11)
    sdf = linkdyn.simulate(model, 1.0, rtol=1e-10, t_out=t)
    law = {k: v for k, v in LAW.items() if k != "stiffness"}
    planar = linkdyn.simulate(pendulum(**law).build(), 1.0, rtol=1e-10, t_out=t)
    np.testing.assert_allclose(sdf.body_position("rod")[:, :2], planar.body_position("rod"),
                               atol=1e-6)
