"""Plots (linkdyn.plotting): what the figures hold, read back from matplotlib's figures as
they are saved."""

import numpy as np
import pytest

import linkdyn
from linkdyn import plotting


@pytest.fixture
def saved(monkeypatch):
    """The figures each plot function saves, by file name."""
    figures = {}
    plt = plotting._pyplot()
    original = plt.Figure.savefig

    def keep(fig, path, *args, **kwargs):
        figures[str(path).rsplit("/", 1)[-1]] = fig
        return original(fig, path, *args, **kwargs)

    monkeypatch.setattr(plt.Figure, "savefig", keep)
    monkeypatch.setattr(plt, "close", lambda fig=None: None)
    return figures


def test_every_marker_is_plotted_and_zeros_stay_off_the_log_axis(tmp_path, saved):
    model = linkdyn.load_model("jansen")
    r = linkdyn.simulate(model, 0.2, dt_out=0.01)
    plotting.plot_simulation(r, tmp_path)
    x_axis = saved["markers.png"].axes[0]
    labels = [line.get_label() for line in x_axis.get_lines()]
    assert labels == list(model.marker_names)          # not only the first marker
    for line, name in zip(x_axis.get_lines(), model.marker_names):
        assert np.allclose(line.get_ydata(), r.marker(name)[:, 0])
    with pytest.raises(KeyError, match="no marker 'nope'"):
        plotting.plot_simulation(r, tmp_path, markers=["nope"])
    # Started at rest: |Phi_q v + Phi_t| is exactly 0 at t = 0. The log panel leaves it out,
    # so its axis spans the data, not 1e-300.
    r = linkdyn.simulate(linkdyn.chain(3), 0.5, dt_out=0.01)
    plotting.plot_simulation(r, tmp_path)
    assert r.phid_norm[0] == 0.0 and np.any(r.phid_norm > 0)
    velocity_panel = saved["invariants.png"].axes[2]
    low, high = velocity_panel.get_ylim()
    data = r.phid_norm[r.phid_norm > 0]
    assert low > data.min() / 100 and high < data.max() * 100


def test_kinematics_body_panels(tmp_path, saved):
    """Signed components (no |v| cusps), and a body that does not turn gets no empty
    rotation panels."""
    b = linkdyn.ModelBuilder("slider")
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("S", length=0.2, mass=1.0, position=(0.0, 0.0))
    b.add_prismatic("P", "ground.O", "S.a", axis=0.0)
    b.add_slide_driver("push", "P", linkdyn.laws.linear(0.1, -0.5))
    model = b.build()
    k = linkdyn.kinematics(model, np.linspace(0.0, 1.0, 21))
    plotting.plot_kinematics(k, tmp_path)
    fig = saved["body_S.png"]
    assert len(fig.axes) == 2                          # v and a only
    vx = fig.axes[0].get_lines()[0].get_ydata()
    assert np.allclose(vx, k.body_velocity("S")[:, 0]) and np.all(vx < 0)   # signed
    assert not fig.axes[0].yaxis.get_major_formatter().get_useOffset()


def test_spatial_body_panels_show_every_component(tmp_path, saved):
    """A spatial body's panels: vx, vy, vz and ax, ay, az (z was left out), and its angular
    velocity and acceleration as the three components of their vectors, each named."""
    k = linkdyn.kinematics("spatial_slider_crank", np.linspace(0.0, 1.0, 21))
    plotting.plot_kinematics(k, tmp_path)
    fig = saved["body_rod.png"]
    labels = [[line.get_label() for line in ax.get_lines()] for ax in fig.axes]
    assert labels == [["vx", "vy", "vz"], ["ax", "ay", "az"],
                      ["omega_x", "omega_y", "omega_z"], ["alpha_x", "alpha_y", "alpha_z"]]
    for panel, series in enumerate((k.body_velocity("rod"), k.body_acceleration("rod"),
                                    k.body_angular_velocity("rod"),
                                    k.body_angular_acceleration("rod"))):
        for c, line in enumerate(fig.axes[panel].get_lines()):
            np.testing.assert_array_equal(line.get_ydata(), series[:, c])
    assert np.ptp(k.body_angular_velocity("rod")[:, 2]) > 1.0     # it turns


def test_spatial_markers_are_plotted_in_x_y_and_z(tmp_path, saved):
    """The heavy top's tip against time: a panel per axis, z (its nutation) included."""
    r = linkdyn.simulate("heavy_top", 0.5, dt_out=0.01)
    plotting.plot_simulation(r, tmp_path)
    fig = saved["markers.png"]
    assert [ax.get_ylabel() for ax in fig.axes] == ["x [m]", "y [m]", "z [m]"]
    for k, ax in enumerate(fig.axes):
        line = next(x for x in ax.get_lines() if x.get_label() == "tip")
        np.testing.assert_array_equal(line.get_ydata(), r.marker("tip")[:, k])
    assert np.ptp(r.marker("tip")[:, 2]) > 0.01


def test_a_series_flat_to_round_off_is_drawn_flat():
    # A resting block's coordinate varies by 1e-15 m: drawn on its own range it would be a
    # trend of round-off with ten-digit tick labels; it is drawn as a flat line.
    from linkdyn.results.plotting import _pyplot, _readable_axis

    plt = _pyplot()
    t = np.linspace(0.0, 100.0, 1001)
    flat = 1.5036e-4 + 1e-15 * np.sin(t)
    moving = 0.1 * np.sin(t)
    fig, (a, b) = plt.subplots(2, 1, layout="constrained")
    try:
        a.plot(t, flat)
        b.plot(t, moving)
        auto = b.get_ylim()
        _readable_axis(a)
        _readable_axis(b)
        lo, hi = a.get_ylim()
        assert hi - lo > 1.9e-6 and lo < flat.min() and hi > flat.max()
        assert b.get_ylim() == auto            # a real motion keeps its own range
    finally:
        plt.close(fig)


def test_a_directory_that_is_not_a_path_is_refused():
    """It leaked pathlib's TypeError."""
    from linkdyn import plotting

    r = linkdyn.simulate("jansen", 0.05, dt_out=0.01)
    with pytest.raises(linkdyn.ArgumentTypeError, match="plot_simulation: path must be"):
        plotting.plot_simulation(r, 3)


def test_body_panels_of_a_schedule_run_back_are_drawn_in_order(tmp_path, saved):
    """A triple-rocker run back at its limit positions: t goes back and forth, and the body
    panels are drawn against the schedule travelled (increasing, the rows in order) with
    that axis named; an ordinary analysis keeps t."""
    from linkdyn.models.linkages import four_bar

    fb = four_bar({"A": (0.0, 0.0), "B": (0.3, 0.2), "C": (0.75, 0.55), "D": (1.0, 0.0),
                   "P": (0.5, 0.5)})
    k = linkdyn.kinematics(fb.build(), np.linspace(0.0, 2 * np.pi, 361), at_limit="reverse")
    assert k.limits and np.any(np.diff(k.t) < 0)
    plotting.plot_kinematics(k, tmp_path)
    fig = saved["body_rocker.png"]
    x = fig.axes[0].get_lines()[0].get_xdata()
    assert np.all(np.diff(x) > 0) and x[-1] == pytest.approx(2 * np.pi, rel=1e-12)
    np.testing.assert_allclose(np.abs(np.diff(x)), np.abs(np.diff(k.t)), rtol=1e-9)
    assert fig.axes[-1].get_xlabel() == "input schedule travelled [s]"
    plain = linkdyn.kinematics(fb.build(), np.linspace(0.0, 1.0, 11))
    plotting.plot_kinematics(plain, tmp_path)
    assert saved["body_rocker.png"].axes[-1].get_xlabel() == "t [s]"
    np.testing.assert_array_equal(saved["body_rocker.png"].axes[0].get_lines()[0].get_xdata(),
                                  plain.t)
