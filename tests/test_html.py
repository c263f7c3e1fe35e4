"""Shareable HTML results (linkdyn.results.html): the page's content, its checks, and the
page itself loaded in a real headless browser (Chromium), where the slider must move the
mechanism."""
import json
import re
import shutil

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ArgumentError

pytest.importorskip("plotly")


def _figure(path):
    """The plotly figure a page carries: its data and frames (the JSON of Plotly.newPlot)."""
    text = path.read_text(encoding="utf-8")
    call = text[text.index("Plotly.newPlot("):]
    decoder = json.JSONDecoder()
    i = call.index("[")
    data, end = decoder.raw_decode(call, i)
    layout_start = call.index("{", end)
    layout, end = decoder.raw_decode(call, layout_start)
    frames_start = call.index("{", end)
    config, end = decoder.raw_decode(call, frames_start)
    frames = re.search(r"Plotly\.addFrames\('linkdyn-result', (\[.*?\])\);", text, re.S)
    return data, layout, json.loads(frames.group(1)) if frames else []


@pytest.fixture(scope="module")
def jansen_page(tmp_path_factory):
    r = linkdyn.simulate("jansen", 1.0, rtol=1e-8, atol=1e-8, dt_out=0.01)
    path = r.to_html(tmp_path_factory.mktemp("html") / "jansen.html", fps=20)
    return r, path


def test_page_is_self_contained_and_its_frames_are_the_mechanism(jansen_page):
    r, path = jansen_page
    text = path.read_text(encoding="utf-8")
    assert "<script src=\"http" not in text          # plotly.js is inside, no network
    data, layout, frames = _figure(path)
    assert len(frames) == 21                          # 1 s at 20 frames per second
    names = [d.get("name") for d in data]
    bodies = names.index("bodies")
    # Frame k draws the bars where the result has them at t = k / 20: every bar's ends,
    # e.g. L1 from the crank pivot P1 to the marker P3.
    for k in (0, 7, 20):
        frame = frames[k]
        row = int(np.argmin(np.abs(r.t - k / 20)))
        x = frame["data"][frame["traces"].index(bodies)]["x"]
        y = frame["data"][frame["traces"].index(bodies)]["y"]
        p3 = r.marker("P3")[row]
        assert abs(x[1] - p3[0]) < 1e-12 and abs(y[1] - p3[1]) < 1e-12
        assert float(frame["name"]) == pytest.approx(r.t[row])
    # The marker series are plotted against t, with a time cursor per frame.
    assert "foot.x" in names and "time" in names
    assert len(layout["sliders"][0]["steps"]) == 21


def test_spatial_page(tmp_path):
    r = linkdyn.simulate("heavy_top", 0.5, rtol=1e-8, atol=1e-8, dt_out=0.01)
    path = r.to_html(tmp_path / "top.html", fps=10, series={"energy": r.energy})
    data, layout, frames = _figure(path)
    assert all(d["type"] == "scatter3d" for d in data if d.get("name") in ("bodies", "markers"))
    assert [d.get("name") for d in data if d["type"] == "scatter"] == ["energy", "time"]
    tip = frames[-1]["data"][2]                     # the markers trace: tip, then cm
    assert [tip["x"][0], tip["y"][0], tip["z"][0]] == pytest.approx(list(r.marker("tip")[-1]),
                                                                    abs=1e-12)


@pytest.mark.parametrize("options, match", [
    ({"fps": 0}, "fps must be a positive number"),
    ({"speed": float("nan")}, "speed must be a positive number"),
    ({"markers": ["nope"]}, "has no marker 'nope'"),
    ({"series": {"s": [1.0, 2.0]}}, "series 's': expected 11 values"),
    ({"series": [1.0]}, "series must be a dict"),
    ({"fps": 1e6}, "frames"),
])
def test_bad_options_are_named(tmp_path, options, match):
    r = linkdyn.simulate("jansen", 0.1, dt_out=0.01)
    with pytest.raises(ArgumentError, match=match):
        r.to_html(tmp_path / "x.html", **options)


def test_an_unknown_option_is_named(tmp_path):
    """It was refused by figure() in a TypeError naming figure."""
    r = linkdyn.simulate("jansen", 0.1, dt_out=0.01)
    with pytest.raises(linkdyn.ArgumentTypeError, match="to_html: unknown option.*'frames'"):
        r.to_html(tmp_path / "x.html", frames=10)
    assert not any(tmp_path.iterdir())


def test_missing_directory_is_named(tmp_path):
    r = linkdyn.simulate("jansen", 0.1, dt_out=0.01)
    with pytest.raises(ArgumentError, match="does not exist"):
        r.to_html(tmp_path / "no" / "x.html")


def test_notebook_drawing_and_summary():
    r = linkdyn.simulate("jansen", 0.2, dt_out=0.01)
    png = r._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = r._repr_html_()
    assert "data:image/png;base64," in html and "linkdyn simulation of jansen" in html
    recorded = linkdyn.simulate("jansen", 0.2, record=linkdyn.Record(markers=["P3"]))
    assert recorded._repr_png_() is None and "<img" not in recorded._repr_html_()
    kin = linkdyn.kinematics("five_ss", [0.0, 0.1])
    assert kin._repr_png_()[:4] == b"\x89PNG"
    # Models: a sketch at their initial guesses beside their summary, planar and spatial.
    for name in ("jansen", "heavy_top", "spherical_watt1"):
        model = linkdyn.load_model(name)
        assert model._repr_png_()[:4] == b"\x89PNG"
        assert "data:image/png;base64," in model._repr_html_()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                    reason="needs Chromium and its driver (ci/install.sh installs them)")
def test_page_loads_in_chromium_and_the_slider_moves_the_mechanism(jansen_page, tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    r, path = jansen_page
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,800"):
        options.add_argument(arg)
    options.binary_location = CHROMIUM
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(path.resolve().as_uri())
        ready = "var g = document.getElementById('linkdyn-result'); return !!(g && g._fullLayout);"
        # Selenium's own wait (a generous bound for a loaded machine, not a speed check)
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(ready),
                                        "the page did not draw its figure")
        state = ("var g = document.getElementById('linkdyn-result');"
                 "var b = g.data.find(d => d.name == 'bodies');"
                 "return [b.x.slice(0, 2), b.y.slice(0, 2), g._fullLayout.sliders[0].active];")
        x0, y0, active0 = driver.execute_script(state)
        p3 = r.marker("P3")
        assert active0 == 0 and (x0[1], y0[1]) == pytest.approx(tuple(p3[0]), abs=1e-12)
        # Click the slider's rail right of its middle, as a user would.
        rail = driver.find_element(By.CSS_SELECTOR, ".slider-rail-touch-rect")
        ActionChains(driver).move_to_element_with_offset(
            rail, int(0.25 * rail.size["width"]), 0).click().perform()
        WebDriverWait(driver, 60).until(lambda d: d.execute_script(state)[2] != 0,
                                        "the slider did not move")
        x1, y1, active1 = driver.execute_script(state)
        row = int(np.argmin(np.abs(r.t - active1 / 20)))
        assert active1 > 10
        assert (x1[1], y1[1]) == pytest.approx(tuple(p3[row]), abs=1e-12)
        assert np.hypot(x1[1] - x0[1], y1[1] - y0[1]) > 1e-3       # the crank has turned
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
        driver.save_screenshot(str(tmp_path / "jansen_page.png"))
        assert (tmp_path / "jansen_page.png").stat().st_size > 10_000
    finally:
        driver.quit()


def test_a_schedule_run_back_at_its_limits_has_one_frame_per_moment():
    """The spherical Watt-I run back at its limit positions passes the same input times
    several times: its frames were named by t, so the slider's steps named the same frame
    twice. They follow the schedule travelled now: named in increasing order, all
    distinct, with the series drawn against it."""
    from linkdyn.results.html import figure

    k = linkdyn.kinematics("spherical_watt1", np.linspace(0.0, 2 * np.pi, 361),
                           at_limit="reverse")
    fig = figure(k)
    names = [float(f.name) for f in fig.frames]
    assert len(names) == len(set(names)) > 100 and np.all(np.diff(names) > 0)
    series = next(trace for trace in fig.data if trace.type == "scatter" and trace.name != "time")
    assert np.all(np.diff(series.x) > 0)
    assert "schedule" in fig.layout.title.text
