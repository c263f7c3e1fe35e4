"""Cams and followers (linkdyn.elements.cams, linkdyn.elements.cam_profiles, csrc/ld_cams.c):
the motion laws against their textbook values, the follower's displacement in kinematics
against the program for every follower (translating and oscillating; knife-edge, roller,
flat face; either sense of turning), the cam rows against finite differences, a measured
profile against an eccentric circle's closed form (and the spline's order), the pressure
angle and the contact force of a spring-loaded follower against their closed forms, the
power balance, model files and the checks of bad input."""

import json
import math
import warnings

import numpy as np
import pytest

import linkdyn
from conftest import assert_rows_match_differences, central_difference
from linkdyn import ModelBuilder
from linkdyn.elements import cam_profiles as cp
from linkdyn.errors import ModelError, ModelFileError, ModelWarning, UnknownNameError

RB, RR, E, H = 0.03, 0.008, 0.005, 0.012      # base circle, roller, offset, lift (m)
OMEGA = 10.0                                  # cam speed (rad/s)
CAM0 = 0.4                                    # the cam body's angle at the start (rad)
PROGRAM = [("rise", math.radians(120), H, "cycloidal"), ("dwell", math.radians(60)),
           ("return", math.radians(120), H, "modified_trapezoid"), ("dwell", math.radians(60))]


ARM_PROGRAM = [("rise", math.radians(120), 0.2, "cycloidal"), ("dwell", math.radians(60)),
               ("return", math.radians(120), 0.2, "modified_trapezoid"),
               ("dwell", math.radians(60))]        # an arm's swing (rad)


def cam_machine(shape="roller", guide="prismatic", turning="counterclockwise", phase=0.3,
                spring=None, mass=0.2, profile=None, motion=None, gravity=-9.81,
                driven=True):
    """A cam on the ground pivot O turning at OMEGA (driven) and its follower: translating
    on a vertical guide at offset E, or oscillating on an arm pivoted at P. ``spring`` =
    (stiffness, preload) pulls a translating follower down onto the cam."""
    b = ModelBuilder("cam", gravity=(0.0, gravity))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("cam", mass=1.0, inertia=1e-3, points={"c": (0.0, 0.0)}, angle=CAM0)
    rr = RR if shape == "roller" else 0.0
    if guide == "prismatic":
        y0 = math.sqrt((RB + rr) ** 2 - E ** 2) + (0.002 if shape == "flat" else 0.0)
        b.add_ground_point("G", (E, 0.08))
        b.add_body("follower", mass=mass, inertia=1e-4, points={"p": (0.0, 0.0)},
                   position=(E, y0), angle=0.2)
        b.add_prismatic("guide", "ground.G", "follower.p", axis=math.pi / 2)
        program = PROGRAM
        if spring is not None:
            k, preload = spring
            b.add_ground_point("S", (E, y0 - 0.05))
            # stretched by preload / k at the start: it pulls the follower onto the cam
            b.add_spring_damper("spring", "ground.S", "follower.p", k, 0.0,
                                free_length=0.05 - preload / k)
    else:
        y0 = RB + rr
        b.add_ground_point("P", (0.06, 0.03))
        b.add_body("follower", mass=mass, inertia=1e-4,
                   points={"p": (0.0, 0.0), "pivot": (0.06, 0.03 - y0)}, position=(0.0, y0))
        b.add_revolute("guide", "ground.P", "follower.pivot")
        program = ARM_PROGRAM
    kw = dict(profile=profile) if profile is not None else dict(motion=motion or program)
    b.add_cam_follower("valve", "cam.c", "follower.p", guide="guide", shape=shape,
                       radius=rr, phase=phase, turning=turning, **kw)
    b.add_revolute("shaft", "ground.O", "cam.c")
    if driven:
        rate = OMEGA if turning == "counterclockwise" else -OMEGA
        b.add_angle_driver("spin", "shaft", {"law": "linear", "value": CAM0, "rate": rate})
    return b


def follower_motion(model, q, guide):
    i = 4 * model.body_names.index("follower")
    if guide == "prismatic":
        return q[:, i + 1] - q[0, i + 1]
    angle = np.unwrap(np.arctan2(q[:, i + 3], q[:, i + 2]))
    return angle - angle[0]


# -- the laws ------------------------------------------------------------------------------

_X = (5.0 - math.sqrt(5.0)) / 10.0     # where the jerk of 4-5-6-7 first vanishes
PEAKS = {"cycloidal": 2.0 * math.pi, "harmonic": math.pi ** 2 / 2.0,
         "3-4-5": 10.0 / math.sqrt(3.0),
         "4-5-6-7": 420 * _X**2 - 1680 * _X**3 + 2100 * _X**4 - 840 * _X**5,
         "modified_trapezoid": 4.8881}          # Norton's table, four digits


@pytest.mark.parametrize("law", cp.LAWS)
def test_each_law_rises_by_one_from_rest_to_rest_with_its_textbook_peak_acceleration(law):
    prog = cp.motion_program("cam", [("rise", math.pi, 1.0, law), ("return", math.pi, 1.0,
                                                                   law)])
    start, coef = prog.pieces()
    x = np.array([0.0, math.pi - 1e-13])
    assert np.abs(cp.evaluate_pieces(start, coef, x) - [0.0, 1.0]).max() < 1e-12
    assert np.abs(cp.evaluate_pieces(start, coef, x, 1)).max() < 1e-12
    # peak y'' of the normalised law: closed forms (the trapezoid: a table's four digits)
    assert cp.peak_acceleration(law) == pytest.approx(PEAKS[law], rel=2e-5)
    # the pieces' derivatives against central differences of the order below
    u = np.linspace(0.05, 2.0 * math.pi - 0.05, 97)
    h = 1e-5
    for order in (1, 2, 3):
        fd = (cp.evaluate_pieces(start, coef, u + h, order - 1)
              - cp.evaluate_pieces(start, coef, u - h, order - 1)) / (2 * h)
        exact = cp.evaluate_pieces(start, coef, u, order)
        near_joint = np.min(np.abs(u[:, None] - np.asarray(start)[None, :]), axis=1) < 2 * h
        np.testing.assert_allclose(exact[~near_joint], fd[~near_joint], atol=1e-6)


def test_a_program_is_continuous_in_displacement_velocity_and_acceleration():
    prog = cp.motion_program("cam", PROGRAM)
    start, coef = prog.pieces()
    for u in np.cumsum([0.0] + [s[1] for s in PROGRAM])[1:-1]:
        for order in (0, 1, 2):
            left = cp.evaluate_pieces(start, coef, u - 1e-9, order)
            right = cp.evaluate_pieces(start, coef, u + 1e-9, order)
            assert abs(left - right) < 1e-5 * max(1.0, abs(left)), (u, order)
    assert prog.total_lift() == H


# -- kinematics ----------------------------------------------------------------------------

FOLLOWERS = [dict(), dict(turning="clockwise"), dict(shape="knife"), dict(shape="flat"),
             dict(guide="revolute"), dict(guide="revolute", shape="flat"),
             dict(guide="revolute", turning="clockwise", shape="knife")]


@pytest.mark.parametrize("kw", FOLLOWERS, ids=lambda kw: "-".join(kw.values()) or "roller")
def test_the_follower_reproduces_the_motion_law_in_kinematics(kw):
    b = cam_machine(**kw)
    model = b.build()
    spec = b.description().cams[0]
    t = np.linspace(0.0, 2.0 * math.pi / OMEGA, 181)       # one cam turn
    k = linkdyn.kinematics(model, t)
    theta = spec.phase + OMEGA * t
    want = spec.lift(theta) - spec.lift(spec.phase)
    got = follower_motion(model, k.q, kw.get("guide", "prismatic"))
    # The lift is 12 mm (0.2 rad): the law holds to the kinematics' tolerance.
    assert np.abs(np.abs(got) - np.abs(want)).max() < 1e-12
    assert np.abs(want).max() > 0.9 * (0.2 if kw.get("guide") == "revolute" else H)


@pytest.mark.parametrize("kw", FOLLOWERS, ids=lambda kw: "-".join(kw.values()) or "roller")
def test_cam_rows_match_finite_differences(kw):
    k = linkdyn.kinematics(cam_machine(**kw).build(), [0.0, 0.07])
    model = cam_machine(driven=False, **kw).build()    # the rows without the driver's
    rng = np.random.default_rng(5)
    for q in k.q:
        # near the assembled position (the follower a little off the cam)
        q = q + 1e-4 * rng.standard_normal(model.nq)
        assert_rows_match_differences(model, q, rng.standard_normal(model.nq),
                                      rng.standard_normal(model.nc))


def eccentric(n, radius=0.03, ecc=0.006):
    """n points of a circle of ``radius`` whose centre lies ``ecc`` from the cam's centre,
    starting off the x axis."""
    t = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False) + 0.1
    return np.column_stack([ecc + radius * np.cos(t), radius * np.sin(t)])


def eccentric_machine(n, shape="roller", height=None, driven=True):
    """The cam a circle of radius 0.03 m whose centre is 0.006 m from the cam's (``n``
    measured points), turning at 1 rad/s from the circle's centre on +x, under a radial
    translating follower on the y axis at ``height``."""
    b = ModelBuilder("eccentric", gravity=(0.0, 0.0))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_ground_point("G", (0.0, 0.1))
    b.add_body("cam", mass=1.0, inertia=1e-3, points={"c": (0.0, 0.0)})
    b.add_body("follower", mass=0.2, inertia=1e-4, position=(0.0, height))
    b.add_prismatic("guide", "ground.G", "follower.cm", axis=math.pi / 2)
    b.add_revolute("shaft", "ground.O", "cam.c")
    if driven:
        b.add_angle_driver("spin", "shaft", {"law": "linear", "value": 0.0, "rate": 1.0})
    b.add_cam_follower("c", "cam.c", "follower.cm", guide="guide", profile=eccentric(n),
                       shape=shape, radius=RR if shape == "roller" else 0.0)
    return b.build()


ECC_T = np.linspace(0.0, 2.0 * math.pi, 241)
ECC_THETA = ECC_T - math.pi / 2        # the circle centre's angle from the +y line


def test_a_measured_eccentric_circle_drives_the_follower_as_its_closed_form():
    """A radial translating roller on a circle of radius R whose centre is e from the
    cam's: the roller's centre lies at e cos(theta) + sqrt((R + r)^2 - e^2 sin^2 theta),
    theta the circle centre's angle from the follower's line; the quintic spline through n
    points converges at order 6."""
    R, ecc = 0.03, 0.006
    want = ecc * np.cos(ECC_THETA) + np.sqrt((R + RR) ** 2 - (ecc * np.sin(ECC_THETA)) ** 2)
    errors = [np.abs(linkdyn.kinematics(eccentric_machine(
        n, height=math.sqrt((R + RR) ** 2 - ecc ** 2)), ECC_T).q[:, 5] - want).max()
        for n in (48, 96)]
    assert errors[1] < 1e-9
    assert errors[0] / errors[1] > 2 ** 6 / 2      # order 6, with a factor 2 to spare


def test_a_flat_face_on_a_measured_eccentric_circle_rides_at_its_support():
    """A flat face normal to its radial guide touches a circle of radius R whose centre is
    e from the cam's at the height R + e cos(theta) (the circle's support function)."""
    R, ecc = 0.03, 0.006
    want = R + ecc * np.cos(ECC_THETA)
    errors = []
    for n in (48, 96):
        k = linkdyn.kinematics(eccentric_machine(n, "flat", R + 0.001), ECC_T)
        errors.append(np.abs(k.q[:, 5] - want).max())
    assert errors[1] < 1e-9
    assert errors[0] / errors[1] > 2 ** 6 / 2
    free = eccentric_machine(48, "flat", R + 0.001, driven=False)   # the row alone
    rng = np.random.default_rng(8)
    for q in k.q[::60]:
        assert_rows_match_differences(free, q + 1e-4 * rng.standard_normal(8),
                                      rng.standard_normal(8), rng.standard_normal(free.nc))
    phi = np.linspace(0.0, 2 * math.pi, 200, endpoint=False)
    r = 0.03 - 0.004 * np.exp(-((phi - math.pi) / 0.25) ** 2)        # a hollow
    with pytest.raises(ModelError, match="a flat face follows a convex profile"):
        _bad(motion=None, profile=np.column_stack([r * np.cos(phi), r * np.sin(phi)]),
             shape="flat", radius=0.0)


# -- dynamics ------------------------------------------------------------------------------

def test_pressure_angle_and_contact_force_of_a_spring_loaded_follower():
    """Translating roller of mass m at offset e, spring k with preload F0 and gravity:
    along the guide N cos(phi) = m s'' omega^2 + k (s - s0) + F0 + m g, with the pressure
    angle tan(phi) = (s' - e) / y, y = d0 + s - s0 the roller's height over the cam's
    centre (d0 = sqrt((rb + rr)^2 - e^2) at the start, where s = s0 = s(phase))."""
    k, F0, m, g = 2000.0, 20.0, 0.2, 9.81
    b = cam_machine(spring=(k, F0), mass=m)
    spec = b.description().cams[0]
    model = b.build()
    t_out = np.linspace(0.0, 2.0 * math.pi / OMEGA, 121)
    res = linkdyn.simulate(model, t_out[-1], t_out=t_out, rtol=1e-10, atol=1e-12)
    theta = spec.phase + OMEGA * res.t
    s, s1, s2 = (spec.lift(theta, n) for n in range(3))
    d0 = math.sqrt((RB + RR) ** 2 - E ** 2)
    phi = np.arctan((s1 - E) / (d0 + s - spec.lift(spec.phase)))
    np.testing.assert_allclose(np.abs(res.cam_pressure_angle("valve")), np.abs(phi),
                               atol=1e-9)
    along = m * s2 * OMEGA ** 2 + k * (s - spec.lift(spec.phase)) + F0 + m * g
    np.testing.assert_allclose(res.cam_force("valve"), along / np.cos(phi), rtol=1e-6,
                               atol=1e-6 * F0)
    assert res.cam_force("valve").min() > 0.0         # below its jump speed it presses


def test_the_cam_does_no_work_the_driver_supplies_what_the_follower_gains():
    b = cam_machine(spring=(2000.0, 20.0), shape="flat")
    model = b.build()
    res = linkdyn.simulate(model, 0.6, dt_out=0.005, rtol=1e-10, atol=1e-12)
    gained = res.energy - res.energy[0]
    np.testing.assert_allclose(res.driver_work, gained, atol=1e-7 * np.abs(gained).max()
                               + 1e-9)
    assert np.abs(gained).max() > 0.05


# -- files and input -----------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(), dict(guide="revolute", shape="flat",
                                             turning="clockwise"),
                                dict(profile=eccentric(40))])
def test_cams_survive_a_model_file_round_trip(tmp_path, kw):
    from linkdyn.describe.modelfile import load, save

    desc = cam_machine(**kw).description()
    path = tmp_path / "cam.json"
    save(desc, path)
    assert load(path) == desc
    data = json.loads(path.read_text())
    assert [c["type"] for c in data["cams"]] == ["cam_follower"]
    # a bad entry is named by its place in the file
    data["cams"][0]["radius"] = -1.0
    path.write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match=r"cams\[0\]"):
        load(path)


def _bad(**kw):
    b = cam_machine()
    base = dict(cam="cam.c", follower="follower.p", guide="guide", motion=PROGRAM,
                radius=RR)
    base.update(kw)
    b.add_cam_follower("bad", base.pop("cam"), base.pop("follower"), **base)


@pytest.mark.parametrize("kw, message", [
    (dict(radius=-0.01), "radius must be zero or positive"),
    (dict(shape="knife"), "a roller needs a positive radius"),
    (dict(shape="disc"), "shape must be one of"),
    (dict(motion=PROGRAM[:3]), "span"),
    (dict(motion=[("rise", math.pi, H, "cycloidal"), ("dwell", math.pi)]), "ends"),
    (dict(motion=[("rise", math.pi, H, "parabolic"), ("return", math.pi, H, "3-4-5")]),
     "law must be one of"),
    (dict(motion=[("jump", math.pi), ("dwell", math.pi)]), "motion must be one of"),
    (dict(profile=eccentric(20)), "either motion"),
    (dict(follower="cam.c"), "other than the cam's"),
    (dict(guide="shaft"), "not the follower's body"),
    (dict(guide="nowhere"), "guide must name"),
    (dict(turning="backwards"), "turning must be one of"),
    (dict(face_angle=0.1), "face_angle is for a flat face"),
])
def test_bad_cam_followers_are_refused_by_name(kw, message):
    with pytest.raises(ModelError, match=message) as info:
        _bad(**kw)
    assert "cam follower 'bad'" in str(info.value)


def test_undercut_cams_warn_and_a_roller_too_big_for_a_measured_hollow_is_refused():
    steep = [("rise", math.radians(40), 0.03, "cycloidal"), ("dwell", math.radians(20)),
             ("return", math.radians(40), 0.03, "cycloidal"), ("dwell", math.radians(260))]
    with pytest.warns(ModelWarning, match=r"cam follower 'bad': the cam is undercut"):
        _bad(motion=steep, radius=0.025)
    # a profile with a hollow of radius about 7 mm: a 10 mm roller does not fit it
    phi = np.linspace(0.0, 2 * math.pi, 200, endpoint=False)
    r = 0.03 - 0.004 * np.exp(-((phi - math.pi) / 0.25) ** 2)
    hollow = np.column_stack([r * np.cos(phi), r * np.sin(phi)])
    with pytest.raises(ModelError, match="larger than the measured profile's concave"):
        _bad(motion=None, profile=hollow, radius=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _bad(motion=None, profile=hollow, radius=0.001)


def test_results_name_unknown_cam_followers():
    model = cam_machine().build()
    res = linkdyn.simulate(model, 0.01)
    with pytest.raises(UnknownNameError, match="cam followers: valve"):
        res.cam_force("cam")


# -- force-closed followers: a compliant contact that lets go ------------------------------

K_SPRING, PRELOAD, M_FOLLOWER = 400.0, 5.0, 0.2
CONTACT = {"stiffness": 1e9, "exponent": 1.5, "damping": 50.0}
START = math.radians(300.0)          # the program's last dwell: the follower sits at rest


def force_closed(omega, contact=CONTACT, shape="roller"):
    """The translating follower held on by its spring (K_SPRING, PRELOAD at the start) and
    gravity, the cam turning at ``omega`` from the last dwell."""
    b = cam_machine(spring=(K_SPRING, PRELOAD), mass=M_FOLLOWER, phase=START, driven=False,
                    shape=shape)
    b.add_angle_driver("spin", "shaft", {"law": "linear", "value": CAM0, "rate": omega})
    spec = b._cams.pop("valve")
    b.add_cam_follower("valve", "cam.c", "follower.p", guide="guide", motion=PROGRAM,
                       radius=spec.radius, phase=START, shape=shape, contact=contact)
    return b


def jump_speed():
    """The closed form of a rigid follower: the spring and gravity hold it on while F0 +
    k s + m g + m s'' omega^2 > 0; the smallest omega at which it fails, its angle, and the
    first angle at which it fails at a given speed."""
    spec = cam_machine().description().cams[0]
    th = np.linspace(0.0, 2.0 * math.pi, 400001)
    s, s2 = spec.lift(th), spec.lift(th, 2)
    hold = PRELOAD + K_SPRING * s + M_FOLLOWER * 9.81
    down = s2 < 0.0
    speeds = np.sqrt(hold[down] / (-M_FOLLOWER * s2[down]))

    def first_failure(omega):
        return th[np.argmax(hold + M_FOLLOWER * s2 * omega ** 2 < 0.0)]

    return float(speeds.min()), first_failure


@pytest.mark.parametrize("shape", ["roller", "flat"])
def test_a_cam_contact_record_matches_finite_differences(shape):
    model = force_closed(OMEGA, shape=shape).build()
    k = linkdyn.kinematics(cam_machine(shape=shape, phase=START).build(), [0.0, 0.011])
    rng = np.random.default_rng(3)
    i = 4 * model.body_names.index("follower")
    for q in k.q:
        q = q.copy()
        q[i + 1] -= 2e-5                     # pressed 20 um into the cam
        v = rng.standard_normal(model.nq)
        np.testing.assert_allclose(model.force_q(q, v).toarray(),
                                   central_difference(lambda x: model.force(x, v), q, 1e-8),
                                   rtol=1e-5, atol=1e-3)
        np.testing.assert_allclose(model.force_v(q, v).toarray(),
                                   central_difference(lambda x: model.force(q, x), v, 1e-6),
                                   rtol=1e-6, atol=1e-6)
        assert np.abs(model.force(q, v)).max() > 1.0   # the contact pushes


def test_the_follower_jumps_just_above_the_speed_the_closed_form_gives():
    omega_jump, first_failure = jump_speed()
    assert 50.0 < omega_jump < 65.0
    turn = lambda omega: 2.0 * math.pi / omega
    below = linkdyn.simulate(force_closed(0.97 * omega_jump).build(), turn(omega_jump),
                             rtol=1e-8, atol=1e-10)
    assert not [e for e in below.events if e.name == "valve" and e.direction < 0]
    assert below.cam_force("valve")[1:].min() > 0.0
    above = linkdyn.simulate(force_closed(1.03 * omega_jump).build(), turn(omega_jump),
                             rtol=1e-8, atol=1e-10)
    off = [e.t for e in above.events if e.name == "valve" and e.direction < 0]
    assert off, "above the jump speed the follower leaves the cam"
    angle = START + 1.03 * omega_jump * off[0] - 2.0 * math.pi
    # The contact's compliance delays the lift-off a little (0.7 degrees at this
    # stiffness, 1.1 at a tenth of it, 0.4 at ten times it).
    lag = math.degrees(angle - first_failure(1.03 * omega_jump))
    assert 0.0 < lag < 1.5
    assert above.cam_force("valve").min() == 0.0


def test_energy_balances_through_lift_off_and_impact():
    omega_jump, _ = jump_speed()
    res = linkdyn.simulate(force_closed(1.1 * omega_jump).build(), 0.15, dt_out=1e-4,
                           rtol=1e-10, atol=1e-12)
    assert len([e for e in res.events if e.name == "valve"]) >= 3   # off, back on, ...
    gained = res.energy - res.energy[0]
    lost = res.element_work("valve")               # the contact's damping (negative)
    assert lost[-1] < 0.0
    np.testing.assert_allclose(gained, res.driver_work + lost,
                               atol=1e-6 * np.abs(res.driver_work).max() + 1e-9)


# -- drawing -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", ["roller", "flat", "knife"])
def test_the_drawing_keeps_the_follower_on_the_turning_cam(shape):
    from linkdyn.compile.geometry import PointGeometry, cam_outlines

    model = cam_machine(shape=shape).build()
    k = linkdyn.kinematics(model, np.linspace(0.0, 0.6, 7))
    rows = np.arange(len(k.t))
    geo = PointGeometry(model, k.q)
    lines = cam_outlines(model, geo, rows)
    assert len(lines) == (1 if shape == "knife" else 2)
    follower = geo.ref(("follower", "p"), rows)
    for i in rows:
        cam = lines[0][i]
        # the surface's 180 chords lie within 3e-5 m of the arcs they stand for
        if shape == "flat":
            face = lines[1][i]
            n = np.array([-(face[1] - face[0])[1], (face[1] - face[0])[0]])
            side = (cam - face[0]) @ (n / np.linalg.norm(n))
            side = side if side.mean() > 0.0 else -side     # the cam on one side, touching
            assert side.min() > -1e-12 and side.min() < 3e-5
        else:
            a, b = cam[:-1], cam[1:]
            w = np.clip(np.sum((follower[i] - a) * (b - a), axis=1)
                        / np.sum((b - a) ** 2, axis=1), 0.0, 1.0)
            reach = np.min(np.hypot(*(a + w[:, None] * (b - a) - follower[i]).T))
            assert reach == pytest.approx(RR if shape == "roller" else 0.0, abs=3e-5)
    fig = k.snapshot(0.3)
    assert len(fig.axes[0].lines) >= len(lines)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_an_html_page_draws_the_cam_and_its_roller(tmp_path):
    pytest.importorskip("plotly")
    from linkdyn.results.html import figure

    res = linkdyn.kinematics(cam_machine().build(), np.linspace(0.0, 0.3, 4))
    fig = figure(res)
    bodies = fig.frames[0].data[0]
    # the bars' outlines, then the cam's 181 surface points and the roller's 25
    assert len([x for x in bodies.x if x is None]) >= 2 and len(bodies.x) > 181 + 25
    page = res.to_html(tmp_path / "cam.html")
    assert page.stat().st_size > 1000


def test_the_built_in_valve_train_stays_on_its_cam_below_the_jump_speed_its_notes_give():
    model = linkdyn.load_model("valve_train")
    desc = model.description
    spec = desc.cams[0]
    spring = desc.forces[0]
    m = desc.bodies[1].mass
    th = np.linspace(0.0, 2.0 * math.pi, 400001)
    s, s2 = spec.lift(th), spec.lift(th, 2)
    preload = spring.stiffness * (spring.free_length.params[0] - 0.035)
    hold = preload + spring.stiffness * s + m * 9.81
    jump = np.sqrt(hold[s2 < 0] / (-m * s2[s2 < 0])).min()
    assert round(jump) == 491
    from importlib import resources

    notes = json.loads(resources.files("linkdyn.models").joinpath("valve_train.json")
                       .read_text(encoding="utf-8"))["notes"]
    assert any("491 rad/s" in note for note in notes)
    res = linkdyn.simulate(model, model.run_defaults["t_end"], dt_out=1e-4)
    assert not [e for e in res.events if e.name == "cam" and e.direction < 0]
    assert res.cam_force("cam")[1:].min() > 100.0


def test_force_closed_followers_in_files_kinematics_and_bad_contacts(tmp_path):
    from linkdyn.describe.modelfile import load, save

    desc = force_closed(OMEGA).description()
    save(desc, tmp_path / "closed.json")
    assert load(tmp_path / "closed.json") == desc
    with pytest.raises(ModelError, match="force-closed cam followers, valve"):
        linkdyn.kinematics(force_closed(OMEGA).build(), [0.0, 0.1])
    for contact, message in (({"damping": 1.0}, "contact needs 'stiffness'"),
                             ({"stiffness": 1e9, "colour": 1}, "contact has no field"),
                             ({"stiffness": -1.0}, "stiffness must be positive"),
                             ({"stiffness": 1e9, "model": "lankarani_nikravesh"},
                              "needs restitution"),
                             (3.0, "contact must be a mapping")):
        with pytest.raises(ModelError, match=message) as info:
            _bad(contact=contact)
        assert "cam follower 'bad'" in str(info.value)


@pytest.mark.parametrize("kw", [dict(), dict(guide="revolute"), dict(shape="flat"),
                                dict(guide="revolute", shape="flat", turning="clockwise")],
                         ids=["roller", "arm", "flat", "arm-flat"])
def test_the_profile_s_pressure_angle_is_the_one_the_mechanism_shows(kw):
    b = cam_machine(**kw)
    spec = b.description().cams[0]
    t = np.linspace(0.0, 2.0 * math.pi / OMEGA, 61)
    res = linkdyn.simulate(b.build(), t[-1], t_out=t, rtol=1e-10, atol=1e-12)
    theta = spec.phase + OMEGA * t       # the program runs forward either way the cam turns
    np.testing.assert_allclose(np.abs(spec.pressure_angle(theta)),
                               np.abs(res.cam_pressure_angle("valve")), atol=1e-8)
    assert np.abs(res.cam_pressure_angle("valve")).max() > 0.02 or kw.get("shape") == "flat"
