"""The linkdyn command."""

import subprocess
import sys

import pytest

import linkdyn
from linkdyn.cli import main
from conftest import ROUNDOFF, ctrl_c_after


def test_assemble_jansen(capsys):
    assert main(["assemble"]) == 0
    out = capsys.readouterr().out
    assert "coordinates 44, constraints 43" in out
    assert "degrees of freedom 1" in out
    assert "total -0.5806293458 J" in out


def test_assemble_a_spatial_body_model_reports_bodies_and_energy(capsys):
    # The heavy top is a body with a mass, not a linkage of points and lines: its energy at
    # the start is the spin's I3 w^2 / 2 = 0.002 * 50^2 / 2 = 2.5 J and the weight's
    # m g l cos(0.5) (l = 0.1 m, 1 kg); a spatial linkage keeps its own wording.
    import math

    assert main(["assemble", "heavy_top"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("model heavy_top: 1 body, 1 joint, 2 markers")
    import re

    kinetic, potential = map(float, re.search(r"energy: kinetic ([-\d.]+) J, potential "
                                              r"([-\d.]+) J", out).groups())
    assert kinetic == pytest.approx(2.5, abs=1e-9)
    assert potential == pytest.approx(9.81 * 0.1 * math.cos(0.5), abs=1e-9)
    assert main(["assemble", "five_ss"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("model five_ss: a spatial linkage") and "energy" not in out


def test_assemble_model_file(tmp_path, capsys, fourbar):
    path = tmp_path / "fourbar.json"
    fourbar.save(path)
    assert main(["assemble", str(path)]) == 0
    assert "model fourbar" in capsys.readouterr().out


def test_errors_are_reported_not_raised(capsys, tmp_path):
    assert main(["assemble", "no-such-model"]) == 2
    assert "not a built-in model" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["assemble", str(bad)]) == 2
    assert "missing required field" in capsys.readouterr().err


def test_assemble_an_overconstrained_linkage_with_redundant_allow(capsys):
    # Bricard's linkage (IFToMM A04): its own run default allows its redundant row, so it
    # assembles with one degree of freedom (60 coordinates, Phi_q of rank 59); asked to
    # refuse them, it is refused with the remedy named before the long list of rows
    assert main(["assemble", "bricard", "--redundant", "raise"]) == 2
    err = capsys.readouterr().err
    assert "--redundant allow" in err
    assert err.index("--redundant allow") < err.index("Constraints involved")
    assert main(["assemble", "bricard"]) == 0
    out = capsys.readouterr().out
    assert "rank 59, degrees of freedom 1" in out
    assert "the model's own run defaults: --redundant allow" in out


def test_generated_models_refuse_a_bad_or_too_large_size_at_once(capsys):
    # N must be a whole number; a size that cannot fit is refused before anything is built
    # (a billion bars would have taken some 45 hours to build, then failed)
    assert main(["assemble", "nfourbar:-1"]) == 2
    assert "needs a positive whole number N, got '-1'" in capsys.readouterr().err
    assert main(["assemble", "chain:1000000000"]) == 2
    assert "1000000000 bars need about" in capsys.readouterr().err
    for make in (linkdyn.chain, linkdyn.models.nfourbar, linkdyn.models.truss,
                 linkdyn.models.spatial.spatial_chain):
        with pytest.raises(linkdyn.ModelError, match="half of what this process may use"):
            make(10**10)


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "linkdyn", "--version"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == f"linkdyn {linkdyn.__version__}"


@pytest.mark.parametrize("command", [
    ["simulate", "spatial_double_pendulum", "--t-end", "0.2"],
    ["kinematics", "crank_rocker", "--t-end", "0.5", "--dt", "0.05"],
])
def test_an_html_output_is_the_interactive_page_not_text(tmp_path, capsys, command):
    """--output FILE.html writes the result's interactive page (as animate --html does), not
    columns of numbers under an .html name; another name still gets the plain text."""
    pytest.importorskip("plotly")
    page, text = tmp_path / "run.html", tmp_path / "run.txt"
    assert main(command + ["--output", str(page)]) == 0
    assert f"wrote {page} (interactive page)" in capsys.readouterr().out
    html = page.read_text()
    assert html.lstrip().lower().startswith("<!doctype html") and "plotly" in html.lower()
    assert main(command + ["--output", str(text)]) == 0
    assert text.read_text().startswith("# t ")


def test_an_html_output_without_plotly_is_refused_before_the_run(tmp_path, capsys,
                                                                 monkeypatch):
    """Without plotly (the html extra), --output FILE.html is refused up front, naming the
    extra to install, before any run (the wheel's test environment has no plotly)."""
    from linkdyn import cli
    from linkdyn.errors import ArgumentError
    from linkdyn.results import html

    def missing():
        raise ArgumentError('to_html needs plotly: pip install "linkdyn[html]"')
    monkeypatch.setattr(html, "_plotly", missing)
    ran = []
    monkeypatch.setattr(cli, "simulate", lambda *a, **k: ran.append(1))
    assert main(["simulate", "--output", str(tmp_path / "run.html")]) == 2
    assert 'pip install "linkdyn[html]"' in capsys.readouterr().err
    assert not ran and not (tmp_path / "run.html").exists()


def test_simulate_writes_outputs(tmp_path, capsys):
    import json

    import numpy as np

    out, stats, plots = tmp_path / "traj.txt", tmp_path / "stats.json", tmp_path / "plots"
    assert main(["simulate", "--t-end", "0.5", "--rtol", "1e-8", "--atol", "1e-8",
                 "--dt-out", "0.1", "--output", str(out), "--stats-json", str(stats),
                 "--plot", str(plots)]) == 0
    text = capsys.readouterr().out
    # Not the benchmark's settings (10 s at 1e-10): no comparison with its published time.
    assert "faster than the published" not in text
    assert "11 bodies, 44 coordinates, 43 constraints" in text
    lines = out.read_text().splitlines()
    assert lines[0] == "# t P3.x P3.y foot.x foot.y energy phi_norm phid_norm"
    data = np.loadtxt(out)
    np.testing.assert_array_equal(data[:, 0], [0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    np.testing.assert_allclose(data[0, 1:3], [0.15, 0.0], atol=ROUNDOFF)
    assert data[:, 5] == __import__("pytest").approx(-0.5806293458, abs=1e-5)
    counters = json.loads(stats.read_text())
    assert set(counters) == {"integration_seconds", "output_seconds", "steps", "rejected_steps",
                             "newton_iterations", "residual_evaluations",
                             "jacobian_evaluations", "factorizations"}
    assert counters["steps"] > 0
    assert (plots / "markers.png").stat().st_size > 10_000
    assert (plots / "invariants.png").stat().st_size > 10_000
    # The default method, auto, ran the explicit method alone: its local test is rtol / 3.
    assert "(explicit method, local error test at 3.33e-09, 3.33e-09)" in text
    main(["simulate", "--t-end", "0.1", "--rtol", "1e-8", "--atol", "1e-8", "--method", "bdf"])
    local = 1e-8 * (1e-8 / 2e-6) ** 0.25
    assert f"(local error test at {local:.3g}, {local:.3g})" in capsys.readouterr().out


def test_simulate_per_step_tolerance(capsys):
    assert main(["simulate", "--t-end", "0.1", "--rtol", "1e-9", "--atol", "1e-9",
                 "--per-step-tolerance", "--method", "bdf"]) == 0
    assert "(local error test at 1e-09, 1e-09)" in capsys.readouterr().out


def test_simulate_rejects_bad_options(capsys):
    import pytest

    with pytest.raises(SystemExit):
        main(["simulate", "--rtol", "-1"])
    assert "expected a positive number" in capsys.readouterr().err


def test_kinematics_command(tmp_path, capsys):
    import numpy as np

    out, plots = tmp_path / "kin.txt", tmp_path / "plots"
    assert main(["kinematics", "--t-end", "0.5", "--dt", "0.01", "--output", str(out),
                 "--plot", str(plots)]) == 0
    text = capsys.readouterr().out
    assert "model jansen_driven: 44 coordinates, 1 driver; 51 positions" in text
    header = out.read_text().splitlines()[0]
    assert header.startswith("# t P3.x P3.y P3.vx P3.vy P3.ax P3.ay foot.x")
    data = np.loadtxt(out)
    assert data.shape == (51, 13)
    # P3 turns on a 0.15 m circle at 2 pi rad/s: speed 0.3 pi, acceleration 0.15 (2 pi)^2.
    np.testing.assert_allclose(np.hypot(data[:, 1], data[:, 2]), 0.15, atol=1e-12)
    np.testing.assert_allclose(np.hypot(data[:, 3], data[:, 4]), 0.3 * np.pi, atol=1e-11)
    np.testing.assert_allclose(np.hypot(data[:, 5], data[:, 6]), 0.15 * (2 * np.pi) ** 2,
                               atol=1e-9)
    assert (plots / "trajectories.png").exists() and (plots / "body_L10.png").exists()


def test_kinematics_command_writes_3d_markers_of_spherical_and_spatial_linkages(tmp_path,
                                                                             capsys):
    import numpy as np

    for name, nmark in (("spherical_rrpr", 4), ("five_ss", 11)):
        out, plots = tmp_path / f"{name}.txt", tmp_path / name
        assert main(["kinematics", name, "--t-end", "0.5", "--dt", "0.01", "--output",
                     str(out), "--plot", str(plots)]) == 0
        header = out.read_text().splitlines()[0]
        assert header.startswith("# t J1.x J1.y J1.z J1.vx J1.vy J1.vz J1.ax J1.ay J1.az J2.x")
        data = np.loadtxt(out)
        assert data.shape == (51, 1 + 9 * nmark)
        assert (plots / "trajectories.png").exists()
    # The spherical linkage's points stay on the unit sphere (J2: columns 10-12).
    data = np.loadtxt(tmp_path / "spherical_rrpr.txt")
    np.testing.assert_allclose(np.linalg.norm(data[:, 10:13], axis=1), 1.0, atol=1e-13)
    assert "model five_ss: 18 coordinates, 1 driver; 51 positions" in capsys.readouterr().out


def test_kinematics_command_rejects_undriven_model(capsys):
    assert main(["kinematics", "jansen"]) == 2
    assert "under-driven: 1 degree of freedom and 0 drivers" in capsys.readouterr().err


def test_kinematics_command_runs_a_rocking_input_back_at_its_limits(tmp_path, capsys):
    # The spherical Watt-I's input rocks between two limit positions: with --at-limit raise
    # the sweep stops at the first and says how to go on; by the model's own default
    # (reverse) it passes both, at the input times the API finds (tests/test_natural.py),
    # and writes every position, the input's time with the analysis' clock beside it.
    import numpy as np

    import linkdyn

    assert main(["kinematics", "spherical_watt1", "--at-limit", "raise"]) == 2
    err = capsys.readouterr().err
    assert "cannot go on past t = 1.69408313 s" in err and "--at-limit reverse" in err
    out = tmp_path / "watt.txt"
    assert main(["kinematics", "spherical_watt1", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    api = linkdyn.kinematics("spherical_watt1", np.linspace(0.0, 2 * np.pi, 361),
                             at_limit="reverse")
    assert [round(t, 9) for t, _ in api.limits] == [1.694083134, -0.756935779]
    assert "2 limit positions passed, the input run back there (input t = 1.69408, " \
           "-0.756936 s)" in printed
    data = np.loadtxt(out)
    assert data.shape[0] == len(api.t) == 361
    np.testing.assert_allclose(data[:, 0], api.t, rtol=0.0, atol=1e-12)   # the schedule
    assert np.all(np.diff(data[:, 1]) > 0)                                 # the clock
    np.testing.assert_allclose(np.diff(data[:, 1]), data[1, 1], rtol=1e-9)  # one step a row
    assert data[0, 1] == 0.0
    assert "# t is the input's time, which runs back" in out.read_text()
    assert "input time t = 0 -> 1.69408 (limit) -> -0.756936 (limit) ->" in printed
    # a limit the input cannot pass is not suggested to be reversed again
    with pytest.raises(linkdyn.SingularConfigurationError) as info:
        linkdyn.kinematics("spherical_watt1", np.linspace(0.0, 2.0, 11))
    assert "at_limit='reverse'" in str(info.value)


def test_kinematics_metrics_of_a_spatial_linkage_are_refused_before_the_sweep(capsys):
    # The metrics are planar; the refusal used to come after the sweep had run and printed.
    assert main(["kinematics", "five_ss", "--metrics"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--metrics: model 'five_ss' is spatial" in captured.err


def test_closed_pipe_is_not_a_crash():
    # `linkdyn simulate | head -1`: the reader leaves early; no traceback.
    proc = subprocess.Popen([sys.executable, "-m", "linkdyn", "simulate", "--t-end", "0.2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert first.startswith(b"model jansen")
    assert "Traceback" not in err


def test_simulate_model_with_force_elements(tmp_path, capsys):
    import numpy as np

    b = linkdyn.ModelBuilder("damped", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
    b.add_revolute("pin", "ground.O", "rod.a")
    b.add_torsional_spring_damper("spring", "pin", 5.0, 0.3, 0.0)
    b.add_marker("tip", "rod.b")
    path = tmp_path / "damped.json"
    b.build().save(path)
    out = tmp_path / "traj.txt"
    assert main(["simulate", str(path), "--t-end", "2", "--rtol", "1e-9", "--atol", "1e-9",
                 "--dt-out", "0.1", "--output", str(out), "--plot", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "force elements 1: work" in text and "energy balance" in text
    header = out.read_text().splitlines()[0].split()[1:]
    assert header[-1] == "work"
    data = np.loadtxt(out)
    energy, work = data[:, header.index("energy")], data[:, header.index("work")]
    assert work[-1] < -1.0                       # the damper took energy out
    assert np.abs(energy - energy[0] - work).max() < 1e-6
    assert (tmp_path / "invariants.png").exists()


def test_interrupted_commands_say_so(capsys):
    import os

    if os.name != "posix":
        return
    with ctrl_c_after(0.3):
        code = main(["kinematics", "--t-end", "100", "--dt", "0.0005"])
    assert code == 130
    assert "interrupted:" in capsys.readouterr().out
    with ctrl_c_after(0.3):
        code = main(["simulate", "--t-end", "1000", "--dt-out", "1"])
    out = capsys.readouterr().out
    assert code == 130 and "(interrupted)" in out and "faster than the published" not in out


def test_command_checks_arguments_and_paths_up_front(tmp_path, capsys):
    import pytest

    # A negative tolerance is named as such (not "expected one argument").
    with pytest.raises(SystemExit):
        main(["simulate", "--rtol", "-1e-6"])
    err = capsys.readouterr().err
    assert "expected a positive number, got '-1e-6'" in err and "_positive_float" not in err
    # A bad output path fails before the run, not after it.
    assert main(["simulate", "--output", str(tmp_path / "no" / "x.txt")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "file.txt").write_text("")
    assert main(["kinematics", "--plot", str(tmp_path / "file.txt" / "plots")]) == 2
    assert "cannot make the directory" in capsys.readouterr().err
    # chain:N reaches the generator; counts read as words.
    assert main(["assemble", "chain:1"]) == 0
    out = capsys.readouterr().out
    assert "1 body, 1 joint, 1 marker" in out
    assert main(["models"]) == 0
    assert "chain:N" in capsys.readouterr().out


def test_gait_command_reports_plots_and_finds_the_limit_cycle(tmp_path, capsys):
    out = tmp_path / "plots"
    assert main(["gait", "walker_gait1", "--t-end", "3", "--orbit", "--plot", str(out)]) == 0
    text = capsys.readouterr().out
    assert "touchdowns" in text and "energy lost" in text
    assert "periodic orbit: period 0.93" in text and "-> stable" in text
    assert (out / "gait.png").stat().st_size > 0 and (out / "contacts.png").stat().st_size > 0


def test_gait_command_says_why_a_walker_that_comes_to_rest_has_no_orbit(capsys):
    # gait IV takes ever shorter steps (it stands still after some 40 s): its section is
    # never crossed again, which the command used to report as a bare "no crossing"
    assert main(["gait", "walker_gait4", "--t-end", "4", "--orbit"]) == 0
    text = capsys.readouterr().out
    assert "periodic orbit: not found (the walker is coming to rest: each of its" in text


def test_gait_command_rejects_a_model_that_is_not_a_walker(capsys):
    assert main(["gait", "jansen"]) == 2
    assert "is not a walker" in capsys.readouterr().err


def test_terminal_progress_line():
    """The command's progress display (a tqdm bar): one line rewritten in place with the
    time reached and the work done, then cleared."""
    import io

    from linkdyn._command import TerminalProgress as _TerminalProgress

    stream = io.StringIO()
    shown = _TerminalProgress(10.0, stream)
    shown(2.5, 1234)
    shown(5.0, 2468)
    shown.clear()
    text = stream.getvalue()
    assert "t = 2.5 s of 10 s  25%" in text and "1234 steps" in text
    assert "t = 5 s of 10 s  50%" in text and "2468 steps" in text
    assert text.count("\r") >= 3           # rewritten in place, and cleared at the end


def test_generated_models_from_the_command(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "nfourbar:N" in out and "iftomm_a01" in out and "chain:N" in out
    assert main(["assemble", "nfourbar:2"]) == 0
    assert "model nfourbar2" in capsys.readouterr().out
    assert main(["simulate", "iftomm_a01", "--t-end", "0.1"]) == 0
    assert "marker P1" in capsys.readouterr().out
    assert "truss:N" in out and "iftomm_a03" in out
    assert main(["assemble", "truss:3"]) == 0
    assert "model truss3" in capsys.readouterr().out
    assert main(["simulate", "iftomm_a03", "--t-end", "0.003", "--dt-out", "1e-4"]) == 0
    assert "force elements 2" in capsys.readouterr().out


def test_kinematics_continue_singular_writes_what_was_solved(tmp_path, capsys):
    """--continue-singular with a driver pushed past its dead centre: the positions solved
    before are written, the stop is reported, the exit status is 1."""
    import math

    from conftest import fourbar_builder

    b = fourbar_builder()
    start = linkdyn.consistent_state(b.build())
    i = 4 * b.build().body_names.index("rocker")
    phi0 = math.atan2(start.q[i + 3], start.q[i + 2])
    b.add_angle_driver("rocker_drive", "C_rocker", linkdyn.laws.linear(phi0, -0.5))
    path = tmp_path / "driven.json"
    b.build().save(path)
    out = tmp_path / "k.txt"
    assert main(["kinematics", str(path), "--t-end", "3", "--dt", "0.01",
                 "--continue-singular", "--output", str(out)]) == 1
    text = capsys.readouterr().out
    assert "stopped:" in text and "rocker_drive" in text
    rows = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert 1 < len(rows) < 301
    assert main(["kinematics", str(path), "--t-end", "3", "--dt", "0.01"]) == 2


def test_simulate_estimates_the_global_error(capsys):
    """--estimate-error prints the largest estimated error of each marker, from a run 100
    times tighter: within 20% of A01's true error (against its exact motion)."""
    import re

    import numpy as np
    from linkdyn.models import simple_pendulum
    from linkdyn.models.iftomm import pendulum_exact

    args = ["simulate", "iftomm_a01", "--t-end", "10", "--rtol", "1e-6", "--atol", "1e-6"]
    assert main(args + ["--estimate-error"]) == 0
    out = capsys.readouterr().out
    assert "estimated global error, from a second run at rtol 1e-08" in out
    estimated = float(re.search(r"marker P1 up to (\S+) m", out).group(1))
    r = linkdyn.simulate(simple_pendulum(), 10.0, rtol=1e-6, atol=1e-6, dt_out=0.01)
    true = np.max(np.hypot(*(r.marker("P1") - pendulum_exact(r.t)).T))
    assert estimated == pytest.approx(true, rel=0.2)
    # At rtol 1e-12 the second run would be held at the round-off floor: refused, said why.
    assert main(["simulate", "iftomm_a01", "--t-end", "1", "--rtol", "1e-12", "--atol",
                 "1e-12", "--estimate-error"]) == 2
    assert "no error estimate is possible at rtol = 1e-12" in capsys.readouterr().err


def test_the_published_time_is_compared_only_for_the_benchmark_itself(capsys):
    assert main(["simulate", "jansen"]) == 0          # 10 s at rtol = atol = 1e-10
    text = capsys.readouterr().out
    assert "faster than the published Python run of this benchmark (76.17 s" in text
    assert "Roupa, Goncalves and Silva, 2018" in text
    assert main(["simulate", "jansen", "--rtol", "1e-6", "--atol", "1e-6"]) == 0
    assert "faster than the published" not in capsys.readouterr().out


def test_counts_are_worded_for_one(tmp_path, capsys):
    b = linkdyn.ModelBuilder("one", gravity=(0.0, -9.81))
    b.add_ground_point("O", (0.0, 0.0))
    b.add_body("ball", mass=1.0, inertia=0.1, position=(0.0, -1.0))
    b.add_revolute("pin", "ground.O", "ball.cm")
    b.add_marker("m", "ball.cm")
    path = tmp_path / "one.json"
    b.build().save(path)
    assert main(["simulate", str(path), "--t-end", "0.1"]) == 0
    text = capsys.readouterr().out
    assert "1 body, 4 coordinates, 3 constraints" in text


def test_kinematics_refuses_an_output_that_cannot_fit_before_allocating(capsys):
    # 1e9 positions of 44 coordinates: refused from the estimate, with nothing allocated.
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["kinematics", "jansen_driven", "--dt", "1e-9"]) == 2
    assert "GiB" in capsys.readouterr().err
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000   # KiB


def test_kinematics_of_a_turning_input_covers_one_turn_by_default(capsys):
    assert main(["kinematics", "stephenson2"]) == 0        # input at 1 rad/s: 2 pi s
    assert "361 positions, t = 0 .. 6.28319 s" in capsys.readouterr().out
    assert main(["kinematics", "stephenson2", "--t-end", "1", "--dt", "0.01"]) == 0
    assert "101 positions, t = 0 .. 1 s" in capsys.readouterr().out


def _runnable_names():
    return linkdyn.builtin_names() + list(linkdyn.models.PROBLEMS)


def _refusal(name, command):
    """Why ``command`` does not apply to built-in ``name`` (None: it must run): a linkage
    with kinematics only has no dynamics to simulate; a model with free degrees of freedom
    has no kinematic analysis."""
    from linkdyn.compile.model import kinematic_only

    model = linkdyn.load_model(name)
    if command == "simulate" and kinematic_only(model):
        return "kinematic description"
    if command == "kinematics" and getattr(model.description, "clearances", ()):
        return "joints with clearance, wrist, leave their play free"
    if command == "kinematics" and any(c.contact for c in getattr(model.description, "cams",
                                                                     ())):
        return "force-closed cam followers, cam, are held on by forces"
    if command == "kinematics" and len(model.driver_names) == 0:
        # fewer rows than coordinates: under-driven; as many (Bricard's, redundant): no drivers
        return "is under-driven" if model.nc < model.nq else "has no drivers"
    return None


@pytest.mark.parametrize("command", ["assemble", "simulate", "kinematics"])
@pytest.mark.parametrize("name", _runnable_names())
def test_every_builtin_runs_with_its_own_defaults(name, command, capsys, tmp_path,
                                                  monkeypatch):
    """`linkdyn COMMAND NAME` with no options: each built-in runs with the defaults its
    model carries (Andrews' 0.03 s, Bricard's redundant row, the Watt-I's rocking input),
    and a command that does not apply to it refuses it in one line that says why. Before,
    iftomm_a03 ran three minutes into a step budget, bricard was refused and
    spherical_watt1 stopped at its first limit position."""
    monkeypatch.chdir(tmp_path)
    refusal = _refusal(name, command)
    code = main([command, name])
    captured = capsys.readouterr()
    if refusal is None:
        assert code == 0, captured.err
        assert "error" not in captured.err
    else:
        assert code == 2
        assert refusal in captured.err and len(captured.err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", _runnable_names())
def test_every_builtin_animates_with_its_own_defaults(name, capsys, tmp_path, monkeypatch):
    """`linkdyn animate NAME`: dynamics, or kinematics for a linkage that has only
    kinematics, over the model's own horizon; it writes linkdyn.gif."""
    from linkdyn.compile.model import kinematic_only

    monkeypatch.chdir(tmp_path)
    assert main(["animate", name]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    kind = "kinematics" if kinematic_only(linkdyn.load_model(name)) else "dynamics"
    assert f": {kind}, " in out
    assert (tmp_path / "linkdyn.gif").stat().st_size > 0


def test_output_paths_and_input_files_are_checked_before_the_run(tmp_path, capsys):
    """A directory where a file is to be written, a --plot directory that cannot be made,
    and an input that is not a regular file are refused at once, by name (before: a
    traceback after the run, or /dev/zero read whole into a MemoryError)."""
    for option in ("--output", "--stats-json"):
        assert main(["simulate", "jansen", option, str(tmp_path)]) == 2
        assert f"{option} {tmp_path}: is a directory" in capsys.readouterr().err
    assert main(["animate", "jansen", "--html", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["simulate", "jansen", "--plot", str(blocker / "plots")]) == 2
    assert "cannot make the directory" in capsys.readouterr().err
    made = tmp_path / "a" / "b"
    assert main(["simulate", "iftomm_a01", "--t-end", "0.05", "--plot", str(made)]) == 0
    assert made.is_dir() and list(made.glob("*.png"))
    capsys.readouterr()
    for source in ("/dev/zero", str(tmp_path)):
        assert main(["simulate", source]) == 2
        err = capsys.readouterr().err
        assert source in err and ("not a regular file" in err or "is a directory" in err)
    assert main(["sweep", "/dev/zero"]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_a_long_build_is_announced(capsys, monkeypatch):
    import linkdyn._command as command

    monkeypatch.setattr(command, "BUILD_NOTICE_SECONDS", 0.0)
    assert main(["assemble", "chain:3"]) == 0
    err = capsys.readouterr().err
    assert "building model chain:3" in err and "built model chain:3 in" in err


def test_generators_and_problems_resolve_in_the_api_as_in_the_command():
    assert linkdyn.load_model("chain:3").nbody == 3
    assert linkdyn.load_model("iftomm_a03").name == "andrews"
    with pytest.raises(linkdyn.errors.ArgumentError, match="positive whole number"):
        linkdyn.load_model("chain:0")
