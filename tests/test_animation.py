"""Animations (linkdyn.animation, result.animate, `linkdyn animate`): the frames are the
requested times, the drawn mechanism is the computed one, and bad arguments say what is
wrong before anything is drawn."""

import numpy as np
import pytest
from PIL import Image

import linkdyn
from linkdyn.animation import AnimationError, frame_times
from linkdyn.results import PointGeometry
from linkdyn.cli import main
from linkdyn.models import nfourbar


def test_frame_times_pick_the_nearest_rows():
    t = np.linspace(0.0, 1.0, 101)
    rows = frame_times(t, fps=10.0, speed=1.0)
    assert len(rows) == 11 and np.allclose(t[rows], np.linspace(0, 1, 11))
    slow = frame_times(t, fps=10.0, speed=0.5)       # half speed: twice the frames
    assert len(slow) == 21 and np.allclose(t[slow], np.linspace(0, 1, 21))
    coarse = frame_times(np.array([0.0, 0.3, 1.0]), fps=10.0, speed=1.0)
    assert list(coarse[:4]) == [0, 0, 1, 1] and coarse[-1] == 2   # 0.2 is nearer 0.3
    with pytest.raises(AnimationError, match="frames"):
        frame_times(np.array([0.0, 1e4]), fps=30.0, speed=1.0)


def test_frames_follow_a_schedule_run_back_at_limit_positions(tmp_path, capsys):
    """A kinematic analysis run back at its limits has t going back and forth (the input's
    schedule): the frames follow the rows in order at the pace of the schedule travelled,
    from the first row to the last. They used to be looked up in t as if it increased: the
    spherical Watt-I's 35 frames jumped from row 9 to row 291."""
    k = linkdyn.kinematics("spherical_watt1", np.linspace(0.0, 2 * np.pi, 361),
                           at_limit="reverse")
    assert np.any(np.diff(k.t) < 0)
    travelled = np.sum(np.abs(np.diff(k.t)))
    rows = frame_times(k.t, fps=25.0, speed=1.0)
    assert len(rows) == int(np.floor(travelled * 25.0 + 1e-9)) + 1
    assert rows[0] == 0 and rows[-1] >= len(k.t) - 2 and np.all(np.diff(rows) >= 0)
    steps = np.diff(rows)               # 0.04 s of schedule a frame, 0.0175 a row
    assert steps.min() >= 2 and steps.max() <= 3
    out = tmp_path / "watt.gif"
    assert main(["animate", "spherical_watt1", "--kinematics", "--t-end", "3",
                 "--at-limit", "reverse", "--output", str(out)]) == 0
    assert "(the input run back at 1 limit position)" in capsys.readouterr().out   # 1.69 s
    assert Image.open(out).n_frames > 1


def test_gif_of_a_simulation(tmp_path):
    model = nfourbar(2)
    r = linkdyn.simulate(model, 0.4, dt_out=0.01)
    path = r.animate(tmp_path / "a02.gif", fps=10)
    with Image.open(path) as im:
        assert im.n_frames == 5 and im.size == (600, 450)
        first = np.asarray(im.convert("RGB")).copy()
        im.seek(4)
        last = np.asarray(im.convert("RGB"))
    assert np.any(first != last)   # the mechanism moved between the frames


def test_drawn_joints_coincide_with_both_of_their_points():
    """The geometry the frames are drawn from is the result's: every revolute joint's two
    points are the same point at every output row (the constraints hold)."""
    model = linkdyn.load_model("jansen")
    r = linkdyn.simulate(model, 0.2, dt_out=0.01)
    geo = PointGeometry(model, r.q)
    rows = np.arange(len(r.t))
    for joint in model.description.joints:
        gap = geo.ref(joint.first, rows) - geo.ref(joint.second, rows)
        assert np.max(np.abs(gap)) < 1e-9, joint.name
    # Bars are drawn end to end: their outline is the segment a-b of the bar's length.
    outline = geo.outline("L1", rows)
    length = np.hypot(*(outline[:, 1] - outline[:, 0]).T)
    assert np.allclose(length, model.description.bodies[0].length)


def test_kinematics_result_animates(tmp_path):
    model = linkdyn.load_model("jansen_driven")
    k = linkdyn.kinematics(model, np.linspace(0.0, 0.2, 21))
    path = k.animate(tmp_path / "k.gif", fps=10, markers=["foot"], trace=False)
    with Image.open(path) as im:
        assert im.n_frames == 3


def test_spherical_and_spatial_linkages_animate_in_3d(tmp_path):
    """Their frames are the requested times (as in the plane); the links' polygons are drawn
    through the computed points; markers must exist."""
    for name in ("spherical_watt1", "five_ss"):
        model = linkdyn.load_model(name)
        k = linkdyn.kinematics(model, np.linspace(0.0, 0.5, 51))
        path = k.animate(tmp_path / f"{name}.gif", fps=10)
        with Image.open(path) as im:
            assert im.n_frames == 6
        with pytest.raises(AnimationError, match="has no marker 'J99'"):
            k.animate(tmp_path / "x.gif", markers=["J99"])


def test_dataframe_of_a_spatial_linkage_has_z_columns():
    pytest.importorskip("pandas")
    k = linkdyn.kinematics(linkdyn.load_model("five_ss"), np.linspace(0.0, 0.5, 11))
    df = k.to_dataframe(markers=["J11"])
    assert list(df.columns) == ["J11.x", "J11.y", "J11.z", "J11.vx", "J11.vy", "J11.vz",
                                "J11.ax", "J11.ay", "J11.az"]
    np.testing.assert_array_equal(df["J11.z"], k.marker("J11")[:, 2])


def test_bad_arguments_are_refused_before_drawing(tmp_path):
    r = linkdyn.simulate(nfourbar(1), 0.1, dt_out=0.01)
    with pytest.raises(AnimationError, match="format"):
        r.animate(tmp_path / "a.avi")
    with pytest.raises(AnimationError, match="does not exist"):
        r.animate(tmp_path / "missing" / "a.gif")
    with pytest.raises(AnimationError, match="fps"):
        r.animate(tmp_path / "a.gif", fps=0)
    with pytest.raises(AnimationError, match="no marker 'tip'.*B0"):
        r.animate(tmp_path / "a.gif", markers=["tip"])
    # these leaked matplotlib's ValueError, or took a string for True
    for size in [(4.0,), (-1.0, 3.0), ("4", 3), (1e3, 3.0)]:
        with pytest.raises(AnimationError, match="size must be \\(width, height\\)"):
            r.animate(tmp_path / "a.gif", size=size)
    with pytest.raises(AnimationError, match="trace must be True or False"):
        r.animate(tmp_path / "a.gif", trace="no")
    assert not any(tmp_path.iterdir())


def test_animate_command(tmp_path, capsys):
    out = tmp_path / "jansen.gif"
    assert main(["animate", "jansen", "--t-end", "0.2", "--fps", "10", "--output",
                 str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    with Image.open(out) as im:
        assert im.n_frames == 3
    assert main(["animate", "jansen", "--output", str(tmp_path / "x.webm")]) == 2
    assert "unknown animation format" in capsys.readouterr().err


def test_animate_command_writes_an_html_page(tmp_path, capsys):
    pytest.importorskip("plotly")
    page = tmp_path / "jansen.html"
    assert main(["animate", "jansen", "--t-end", "0.2", "--html", str(page)]) == 0
    assert f"wrote {page}" in capsys.readouterr().out
    assert page.stat().st_size > 100_000 and not (tmp_path / "linkdyn.gif").exists()
    both = tmp_path / "both.gif"
    assert main(["animate", "jansen", "--t-end", "0.2", "--html", str(page), "--output",
                 str(both)]) == 0
    assert both.stat().st_size > 0
    assert main(["animate", "jansen", "--html", str(tmp_path / "no" / "x.html")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_snapshot_draws_one_row_with_the_traces_up_to_it():
    r = linkdyn.simulate("jansen", 0.5, dt_out=0.01)
    fig = r.snapshot(0.25, markers=["foot"])
    try:
        ax = fig.axes[0]
        trace = [line for line in ax.get_lines() if line.get_label() == "foot"][0]
        row = int(np.argmin(np.abs(r.t - 0.25)))
        np.testing.assert_allclose(np.column_stack(trace.get_data()),
                                   r.marker("foot")[:row + 1])
        assert ax.texts[0].get_text() == f"t = {r.t[row]:.3f} s"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    with pytest.raises(AnimationError, match="finite number"):
        r.snapshot(float("nan"))
    with pytest.raises(AnimationError, match="no marker"):
        r.snapshot(0.1, markers=["nope"])
    with pytest.raises(AnimationError, match="size must be"):
        r.snapshot(0.1, size=(1.0,))
    kin = linkdyn.kinematics("five_ss", np.linspace(0.0, 1.0, 11))
    fig3 = kin.snapshot()
    assert fig3.axes[0].name == "3d"
    import matplotlib.pyplot as plt

    plt.close(fig3)


@pytest.mark.parametrize("element", ["motor", "flexible_joint"])
def test_models_with_compiler_made_bodies_animate(tmp_path, element):
    # A motor's rotor inertia and a flexible joint add bodies the description does not have
    # ("<name>/rotor", "<name>/flex"); they ride at the joint and are drawn with it, and the
    # described bodies are drawn as always.
    b = linkdyn.ModelBuilder("arm", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("arm", length=0.4, density=1.0, position=(0.2, 0.0), angle=0.0)
    b.add_revolute("J", "ground.O", "arm.a")      # the output (arm) second
    b.add_marker("tip", "arm.b")
    if element == "motor":
        b.add_motor("M", "J", 0.1, rotor_inertia=1e-4, gear_ratio=10, rotor_mass=0.1)
    else:
        b.add_flexible_joint("M", "J", stiffness=50.0, damping=0.5, rotor_inertia=1e-4,
                             rotor_mass=0.1, form="jiminy", flex_inertia=1e-5)
    model = b.build()
    assert any(name.startswith("M/") for name in model.body_names)
    r = linkdyn.simulate(model, 0.3, dt_out=0.01)
    geo = PointGeometry(model, r.q)
    assert geo.drawn == ["arm"]
    path = r.animate(tmp_path / "arm.gif", fps=10)
    with Image.open(path) as im:
        first = np.asarray(im.convert("RGB")).copy()
        im.seek(im.n_frames - 1)
        last = np.asarray(im.convert("RGB"))
    assert np.any(first != last)   # the arm fell between the frames
    out = tmp_path / "cli.gif"
    model.save(tmp_path / "arm.json")
    assert main(["animate", str(tmp_path / "arm.json"), "--t-end", "0.2",
                 "--output", str(out)]) == 0
    assert out.stat().st_size > 0


def test_a_walker_is_drawn_with_its_floor_and_round_feet():
    from matplotlib.patches import Circle

    from linkdyn.results.animation import _contact_artists, pivots
    from linkdyn.results.plotting import _pyplot

    model = linkdyn.load_model("walker_gait1")
    r = linkdyn.simulate(model, 0.2, dt_out=0.05)
    geo = PointGeometry(model, r.q)
    rows = np.arange(len(r.t))
    assert pivots(model, geo).shape == (0, 2)     # no support drawn at the floor's origin
    plt = _pyplot()
    fig, ax = plt.subplots()
    try:
        draw = _contact_artists(ax, model, geo, rows, (-1.0, -1.0), (1.0, 1.0))
        feet = [p for p in ax.patches if isinstance(p, Circle)]
        assert len(feet) == 2 and len(ax.get_lines()) == 1      # two feet, one floor
        draw(len(rows) - 1)
        for foot, contact in zip(feet, model.description.contacts):
            assert foot.radius == contact.radius
            np.testing.assert_allclose(foot.center, geo.ref(contact.point, rows)[-1])
    finally:
        plt.close(fig)


def test_eleven_traces_get_eleven_colours():
    from linkdyn.results.plotting import distinct_colors

    assert len(set(distinct_colors(11))) == 11 and len(set(distinct_colors(30))) == 30
