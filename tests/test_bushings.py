"""Bushings (linkdyn.elements.bushings): the force derivatives against finite differences,
each component's oscillation against its closed form, energy and momenta of two free bodies
joined by a bushing, a preload that carries a weight, files and bad input."""

import json
import math

import numpy as np
import pytest

import linkdyn
from conftest import central_difference
from linkdyn.errors import ModelError, ModelFileError, UnknownNameError

K3 = (4e4, 2e4, 50.0)
C3 = (3.0, 2.0, 0.02)
K6 = (4e4, 3e4, 2e4, 60.0, 40.0, 30.0)
C6 = (3.0, 2.0, 1.0, 0.02, 0.03, 0.01)
J6 = (0.01, 0.02, 0.025)


def planar_pair(damping=C3, preload=None, gravity=(0.0, 0.0)):
    """Two free bodies joined by a bushing at 0.3 rad from the first body's u."""
    b = linkdyn.ModelBuilder("pair", gravity=gravity)
    b.add_body("a", mass=1.5, inertia=0.02, points={"p": (0.1, 0.02)}, angle=0.4,
               velocity=(0.1, -0.2), omega=0.5)
    pa = np.array([math.cos(0.4), math.sin(0.4)])
    at = 0.1 * pa + 0.02 * np.array([-pa[1], pa[0]])
    b.add_body("b", mass=0.8, inertia=0.01, points={"q": (-0.05, 0.0)},
               position=tuple(at + (0.05, 0.001)), angle=0.0, velocity=(-0.3, 0.4),
               omega=-1.0)
    b.add_bushing("mount", "a.p", "b.q", stiffness=K3, damping=damping, preload=preload,
                  angle=0.3)
    return b


def spatial_pair(damping=C6):
    b = linkdyn.SpatialModelBuilder("pair", gravity=(0.0, 0.0, 0.0))
    Rz = np.array([[0.8, -0.6, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
    b.add_body("a", mass=1.5, inertia=(0.02, 0.03, 0.04), points={"p": (0.1, 0.02, 0.0)},
               orientation=Rz, velocity=(0.1, -0.2, 0.05), angular_velocity=(0.3, 0.1, 0.5))
    b.add_body("b", mass=0.8, inertia=(0.01, 0.015, 0.02), points={"q": (-0.05, 0.0, 0.01)},
               position=(0.2, 0.1, 0.0), velocity=(-0.3, 0.4, 0.0),
               angular_velocity=(-0.4, 0.2, 0.1))
    c, s = math.cos(0.5), math.sin(0.5)
    b.add_bushing("mount", "a.p", "b.q", stiffness=K6, damping=damping,
                  orientation=[[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    return b


@pytest.mark.parametrize("make", [planar_pair, spatial_pair])
def test_bushing_forces_and_their_derivatives_match_differences(make):
    model = make().build()
    rng = np.random.default_rng(2)
    q = model.q0 + 0.05 * rng.standard_normal(model.nq)
    v = rng.standard_normal(model.nq)
    fq = central_difference(lambda x: model.force(x, v), q)
    fv = central_difference(lambda x: model.force(q, x), v)
    np.testing.assert_allclose(model.force_q(q, v).toarray(), fq, rtol=1e-7, atol=1e-6)
    np.testing.assert_allclose(model.force_v(q, v).toarray(), fv, rtol=1e-7, atol=1e-6)


def _momenta(r, spatial):
    """Total linear and angular momentum (about the origin) of the run's bodies."""
    out_p, out_l = 0.0, 0.0
    for spec in r.model.description.bodies:
        x, v = r.body_position(spec.name), r.body_velocity(spec.name)
        w = r.body_angular_velocity(spec.name)
        if spatial:
            m = spec.mass
            J = np.diag(spec.inertia) if np.ndim(spec.inertia) == 1 else np.array(spec.inertia)
            R = r.body_rotation(spec.name)
            spin = np.einsum("nij,jk,nlk,nl->ni", R, J, R, w)
            out_l = out_l + m * np.cross(x, v) + spin
        else:
            m = spec.resolved_mass()
            out_l = out_l + m * (x[:, 0] * v[:, 1] - x[:, 1] * v[:, 0]) + \
                spec.resolved_inertia() * w
        out_p = out_p + m * v
    return out_p, out_l


@pytest.mark.parametrize("make, spatial", [(planar_pair, False), (spatial_pair, True)])
def test_two_free_bodies_keep_energy_and_momenta(make, spatial):
    r = linkdyn.simulate(make(damping=None).build(), 1.0, rtol=1e-11, atol=1e-11,
                         t_out=np.linspace(0.0, 1.0, 11))
    energy = r.kinetic_energy + r.potential_energy
    assert np.ptp(r.potential_energy) > 1e-3          # the bushing works
    assert np.ptp(energy) < 1e-8 * np.abs(energy).max()
    p, ang = _momenta(r, spatial)
    assert np.abs(p - p[0]).max() < 1e-9
    assert np.abs(ang - ang[0]).max() < 1e-9
    # with damping the energy falls by the dampers' work, and only by it
    r = linkdyn.simulate(make().build(), 1.0, rtol=1e-11, atol=1e-11,
                         t_out=np.linspace(0.0, 1.0, 11))
    energy = r.kinetic_energy + r.potential_energy
    work = r.element_work("mount")
    assert work[-1] < -1e-3
    assert np.abs(energy - energy[0] - work).max() < 1e-8 * np.abs(energy).max()


@pytest.mark.parametrize("component", range(3))
def test_a_planar_mount_oscillates_at_its_closed_form_frequencies(component):
    mass, inertia = 2.0, 0.01
    b = linkdyn.ModelBuilder("mount", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    rate = [0.0, 0.0, 0.0]
    rate[component] = 0.3
    b.add_body("block", mass=mass, inertia=inertia, velocity=tuple(rate[:2]),
               omega=rate[2])
    b.add_bushing("mount", "ground.O", "block.cm", stiffness=K3)
    w = math.sqrt(K3[component] / (mass if component < 2 else inertia))
    t = np.linspace(0.0, 2 * math.pi / w, 5)
    r = linkdyn.simulate(b.build(), t[-1], rtol=1e-11, atol=1e-13, t_out=t)
    s = r.bushing_force("mount")[:, component] / -K3[component]
    np.testing.assert_allclose(s, 0.3 / w * np.sin(w * t), rtol=0, atol=1e-9 * 0.3 / w)


@pytest.mark.parametrize("component", range(6))
def test_a_spatial_mount_oscillates_at_its_closed_form_frequencies(component):
    mass = 2.0
    b = linkdyn.SpatialModelBuilder("mount", gravity=(0.0, 0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0, 0.0))
    rate = np.zeros(6)
    rate[component] = 0.3
    b.add_body("block", mass=mass, inertia=J6, velocity=tuple(rate[:3]),
               angular_velocity=tuple(rate[3:]))
    b.add_bushing("mount", "ground.O", "block.cm", stiffness=K6)
    w = math.sqrt(K6[component] / (mass if component < 3 else J6[component - 3]))
    t = np.linspace(0.0, 2 * math.pi / w, 5)
    r = linkdyn.simulate(b.build(), t[-1], rtol=1e-11, atol=1e-13, t_out=t)
    f = r.bushing_force("mount")
    s = f[:, component] / -K6[component]
    np.testing.assert_allclose(s, 0.3 / w * np.sin(w * t), rtol=0, atol=1e-9 * 0.3 / w)
    others = np.delete(f, component, axis=1)
    assert np.abs(others).max() < 1e-9 * np.abs(f[:, component]).max()


def test_a_preload_carries_a_weight_without_deflection():
    b = linkdyn.ModelBuilder("mount", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=2.0, inertia=0.01)
    b.add_bushing("mount", "ground.O", "block.cm", stiffness=K3, preload=(0.0, 2.0 * 9.81, 0.0))
    r = linkdyn.simulate(b.build(), 0.5, rtol=1e-10, atol=1e-10)
    # unloaded, the mount would sag m g / ky = 9.8e-4 m; preloaded, the block stays put to
    # the run's tolerance
    assert np.abs(r.q[:, :2]).max() < 1e-8
    np.testing.assert_allclose(r.bushing_force("mount")[-1], (0.0, 2.0 * 9.81, 0.0),
                               atol=1e-6 * 2.0 * 9.81)


def test_bushings_in_model_files_and_bad_input(tmp_path):
    from linkdyn.describe import spatialfile
    from linkdyn.describe.modelfile import dumps, load, loads, save

    for make, write in ((planar_pair, save), (spatial_pair, spatialfile.save)):
        desc = make().description()
        write(desc, tmp_path / "m.json")
        assert load(tmp_path / "m.json") == desc
    data = json.loads(dumps(planar_pair().description()))
    data["forces"][0]["stiffness"] = [1.0, 2.0]
    with pytest.raises(ModelFileError, match=r"forces\[0\].*stiffness must be 3 numbers .*x, "
                                             "y, rotation"):
        loads(json.dumps(data))
    b = planar_pair()
    with pytest.raises(ModelError, match=r"bushing 'm2': stiffness\[1\] \(y\)"):
        b.add_bushing("m2", "a.p", "b.q", stiffness=(1.0, -2.0, 3.0))
    with pytest.raises(ModelError, match="would do nothing"):
        b.add_bushing("m2", "a.p", "b.q", stiffness=(0.0, 0.0, 0.0))
    with pytest.raises(ModelError, match="two different bodies"):
        b.add_bushing("m2", "a.p", "a.cm", stiffness=K3)
    s = spatial_pair()
    with pytest.raises(ModelError, match="orientation must be a rotation matrix"):
        s.add_bushing("m2", "a.p", "b.q", stiffness=K6, orientation=np.eye(3) * 2)
    r = linkdyn.simulate(planar_pair().build(), 0.01)
    with pytest.raises(UnknownNameError):
        r.bushing_force("nope")


# -- tabulated (nonlinear) components ------------------------------------------------------

#: A rubber mount that stiffens: 2e4 N/m near rest, bottoming out at +-5 mm.
STIFFENING = {"deflection": [-0.006, -0.004, -0.002, 0.0, 0.002, 0.004, 0.006],
              "force": [-400.0, -120.0, -42.0, 0.0, 42.0, 120.0, 400.0]}


def curve():
    from scipy.interpolate import PchipInterpolator

    return PchipInterpolator(STIFFENING["deflection"], STIFFENING["force"])


def mounted_block(amplitude, table=STIFFENING, damping=None, gravity=(0.0, 0.0)):
    """A 2 kg block on a bushing to the ground, its x component the table, released from
    ``amplitude`` m."""
    b = linkdyn.ModelBuilder("rubber", gravity=gravity)
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("block", mass=2.0, inertia=0.01, position=(amplitude, 0.0))
    b.add_bushing("mount", "ground.O", "block.cm", stiffness=(table, 2e4, 50.0),
                  damping=damping)
    return b


def test_a_tabulated_component_matches_finite_differences_and_its_curve():
    b = planar_pair()
    b._forces.pop("mount")
    b.add_bushing("mount", "a.p", "b.q", stiffness=(STIFFENING, 2e4, 50.0), damping=C3,
                  angle=0.3)
    model = b.build()
    rng = np.random.default_rng(4)
    for _ in range(3):      # inside the table and beyond its ends (the tangents)
        q = model.q0 + 0.004 * rng.standard_normal(model.nq)
        v = rng.standard_normal(model.nq)
        # (the cubics' third derivative is some 1e10 N/m^3 at this millimetre scale: a
        # step of 1e-7 keeps the differences' own error near 1e-4)
        np.testing.assert_allclose(model.force_q(q, v).toarray(),
                                   central_difference(lambda x: model.force(x, v), q, 1e-7),
                                   rtol=1e-7, atol=1e-3)
    # the force along x is minus the curve, its energy the curve's integral
    for x in (-0.0075, -0.003, 0.0011, 0.0049, 0.008):
        m = mounted_block(x).build()
        f = m.force(m.q0, np.zeros(m.nq))[0]
        c = curve()
        end = -0.006 if x < -0.006 else 0.006 if x > 0.006 else x
        want = float(c(end)) + float(c.derivative()(end)) * (x - end)
        assert f == pytest.approx(-want, rel=1e-12, abs=1e-9)
        inside = float(c.integrate(0.0, end))
        energy = inside + float(c(end)) * (x - end) + 0.5 * float(c.derivative()(end)) \
            * (x - end) ** 2
        assert m.energy(m.q0, np.zeros(m.nq))[1] == pytest.approx(energy, rel=1e-12)


def test_a_block_on_a_stiffening_mount_swings_at_the_quadrature_s_period():
    """Undamped, released from rest at A: the period 4 int_0^A dx / sqrt(2 (V(A) - V(x)) /
    m) by quadrature of the same curve; the energy is conserved."""
    from scipy.integrate import quad

    A, m = 0.0045, 2.0
    c = curve()
    V = lambda x: float(c.integrate(0.0, x))
    # x = A sin(phi) takes out the end's inverse-square-root singularity
    period = 4.0 * quad(lambda p: A * math.cos(p) / math.sqrt(2.0 * (V(A) - V(A * math.sin(p)))
                                                           / m), 0.0, math.pi / 2,
                        epsabs=1e-13, epsrel=1e-12)[0]
    t = np.linspace(0.0, 2 * period, 801)
    r = linkdyn.simulate(mounted_block(A).build(), t[-1], t_out=t, rtol=1e-11, atol=1e-14)
    x = r.q[:, 0]
    assert abs(x[400] - A) < 1e-8 and abs(x[-1] - A) < 1e-8     # back at A each period
    crossings = t[1:][(x[1:] < 0.0) & (x[:-1] >= 0.0)]
    assert np.diff(crossings)[0] == pytest.approx(period, rel=1e-6)
    np.testing.assert_allclose(r.energy, r.energy[0], rtol=1e-9)


def test_a_straight_table_is_the_linear_bushing():
    line = {"deflection": [-0.01, 0.0, 0.01], "force": [-200.0, 0.0, 200.0]}
    r_lin = linkdyn.simulate(mounted_block(0.003, table=2e4, damping=C3).build(), 0.2,
                             dt_out=0.01, rtol=1e-11)
    r_tab = linkdyn.simulate(mounted_block(0.003, table=line, damping=C3).build(), 0.2,
                             dt_out=0.01, rtol=1e-11)
    np.testing.assert_allclose(r_tab.q, r_lin.q, atol=1e-12)


def test_tabulated_bushings_in_files_and_bad_tables(tmp_path):
    from linkdyn.describe.modelfile import load, save

    desc = mounted_block(0.001).description()
    save(desc, tmp_path / "rubber.json")
    assert load(tmp_path / "rubber.json") == desc
    assert json.loads((tmp_path / "rubber.json").read_text())["forces"][0]["stiffness"][0] \
        == STIFFENING
    for table, message in (({"deflection": [0.0, 0.1]}, "'deflection' and 'force'"),
                           ({"deflection": [0.0, 0.1], "force": [0.0, 1.0]},
                            "at least 3 points"),
                           ({"deflection": [0.0, 0.2, 0.1], "force": [0.0, 1.0, 2.0]},
                            "deflections must increase; entry 2"),
                           ({"deflection": [0.0, 0.1, "x"], "force": [0.0, 1.0, 2.0]},
                            "lists of numbers")):
        with pytest.raises(ModelError, match="bushing 'mount'") as info:
            mounted_block(0.0, table=table)
        assert message in str(info.value) and "stiffness[0] (x)" in str(info.value)
