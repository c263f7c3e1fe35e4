"""Parameter sweeps (linkdyn.sweep): the same numbers in every executor, failures kept,
models and results that pickle."""

import os
import pickle

import numpy as np
import pytest

import linkdyn
from linkdyn.errors import ModelError
from linkdyn.sweep import apply_parameters, expand_cases

pd = pytest.importorskip("pandas")


def foot_outputs(result):
    foot = result.marker("P3")
    return {"foot_min_y": float(foot[:, 1].min()), "foot_final_x": float(foot[-1, 0])}


GRID = {"gravity": [[0.0, -9.81], [0.0, -5.0]], "bodies.L5.length": [0.61, 0.63]}
OPTIONS = {"t_end": 0.2, "rtol": 1e-8, "atol": 1e-8, "dt_out": 0.01}


def test_cases_from_a_grid_and_a_list():
    cases = expand_cases({"a": [1, 2], "b": [3, 4, 5]})
    assert len(cases) == 6 and cases[0] == {"a": 1, "b": 3} and cases[1] == {"a": 1, "b": 4}
    assert expand_cases([{"a": 1}, {"a": 2}]) == [{"a": 1}, {"a": 2}]
    with pytest.raises(ValueError, match="empty"):
        expand_cases({"a": []})


def test_model_paths_are_validated():
    data = linkdyn.modelfile.to_dict(linkdyn.load_model("jansen").description)
    changed = apply_parameters(data, {"bodies.L5.length": 0.6, "gravity": [0.0, -1.0]})
    assert [b for b in changed["bodies"] if b["name"] == "L5"][0]["length"] == 0.6
    assert data["gravity"] != changed["gravity"]   # the input is not modified
    with pytest.raises(ModelError, match="no body named 'L99'"):
        apply_parameters(data, {"bodies.L99.length": 1.0})
    with pytest.raises(ModelError, match="no body named 'L99'"):
        linkdyn.sweep("jansen", {"bodies.L99.length": [1.0]}, run_options=OPTIONS,
                      executor="serial")


def test_serial_and_process_pool_give_identical_numbers():
    serial = linkdyn.sweep("jansen", GRID, run_options=OPTIONS, outputs=foot_outputs,
                           executor="serial")
    pool = linkdyn.sweep("jansen", GRID, run_options=OPTIONS, outputs=foot_outputs,
                         executor="process", workers=2)
    assert list(serial["status"]) == ["ok"] * 4
    for column in ("foot_min_y", "foot_final_x", "steps", "newton_iterations"):
        assert list(serial[column]) == list(pool[column])   # bit for bit
    # The parameters matter: different cases, different feet.
    assert serial["foot_final_x"].nunique() == 4
    # A case equals the same model simulated directly.
    model = linkdyn.load_model("jansen")
    data = apply_parameters(linkdyn.modelfile.to_dict(model.description),
                            {"gravity": [0.0, -5.0], "bodies.L5.length": 0.63})
    direct = linkdyn.simulate(linkdyn.model.compile_model(linkdyn.modelfile.from_dict(data)),
                              **{k: v for k, v in OPTIONS.items()})
    row = serial.iloc[3]   # the last case of the grid: gravity -5, length 0.63
    assert row["foot_final_x"] == foot_outputs(direct)["foot_final_x"]


def test_a_record_crosses_processes_and_keeps_the_numbers():
    # A Record in the run options: each case keeps only its series, in every executor, with
    # the numbers of whole rows.
    options = {**OPTIONS, "record": linkdyn.Record(markers="P3")}
    recorded = linkdyn.sweep("jansen", GRID, run_options=options, outputs=foot_outputs,
                             executor="process", workers=2)
    whole = linkdyn.sweep("jansen", GRID, run_options=OPTIONS, outputs=foot_outputs,
                          executor="serial")
    assert list(recorded["status"]) == ["ok"] * 4
    for column in ("foot_min_y", "foot_final_x", "steps"):
        assert list(recorded[column]) == list(whole[column])


def test_dask_local_cluster_gives_identical_numbers():
    pytest.importorskip("dask.distributed")
    serial = linkdyn.sweep("jansen", GRID, run_options=OPTIONS, outputs=foot_outputs,
                           executor="serial")
    dask = linkdyn.sweep("jansen", GRID, run_options=OPTIONS, outputs=foot_outputs,
                         executor="dask", workers=2)
    for column in ("foot_min_y", "foot_final_x", "steps"):
        assert list(serial[column]) == list(dask[column])


def test_a_failing_case_is_recorded_and_the_others_kept():
    table = linkdyn.sweep("jansen", [{"rtol": 1e-8}, {"rtol": -1.0}, {"t_end": 0.1}],
                          run_options={"t_end": 0.1, "atol": 1e-8}, outputs=foot_outputs,
                          executor="serial")
    assert list(table["status"]) == ["ok", "error", "ok"]
    # A bad option is a linkdyn ArgumentError (a ValueError too), recorded by its own name.
    assert table["error_type"][1] == "ArgumentError" and "rtol" in table["error_message"][1]
    assert np.isfinite(table["foot_min_y"][0]) and np.isfinite(table["foot_min_y"][2])


def test_factory_and_other_runs():
    def pendulum(case):
        b = linkdyn.ModelBuilder("pendulum", gravity=(0.0, -9.81))
        b.add_ground_point("O", (0.0, 0.0))
        b.add_bar("rod", length=1.0, mass=1.0, position=(0.5, 0.0))
        b.add_revolute("pin", "ground.O", "rod.a")
        b.add_torsional_spring_damper("spring", "pin", case["forces.spring.stiffness"],
                                      0.0, 0.0)
        return b.build()

    table = linkdyn.sweep(pendulum, {"forces.spring.stiffness": [10.0, 20.0]},
                          run="equilibrium", executor="process", workers=2,
                          outputs=lambda eq: float(np.arctan2(eq.q[3], eq.q[2])))
    angles = table["output"].to_numpy()
    assert angles[0] < angles[1] < 0.0    # a stiffer spring holds the rod higher
    for k, angle in zip((10.0, 20.0), angles):
        assert abs(-k * angle - 9.81 * 0.5 * np.cos(angle)) < 1e-9


def test_models_and_results_pickle():
    model = linkdyn.load_model("jansen")
    again = pickle.loads(pickle.dumps(model))
    assert again == model and again.nq == model.nq
    result = linkdyn.simulate(model, 0.05, rtol=1e-8, atol=1e-8)
    copy = pickle.loads(pickle.dumps(result))
    np.testing.assert_array_equal(copy.q, result.q)
    np.testing.assert_array_equal(copy.energy, result.energy)
    kin = linkdyn.kinematics(linkdyn.load_model("jansen_driven"), np.linspace(0, 0.1, 11))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(kin)).q, kin.q)


def test_sweep_command_writes_csv(tmp_path, capsys):
    import json

    from linkdyn.cli import main

    spec = {"model": "jansen", "run": "simulate",
            "run_options": {"t_end": 0.1, "rtol": 1e-8, "atol": 1e-8},
            "parameters": {"bodies.L5.length": [0.61, 0.62]},
            "outputs": [{"name": "foot_min_y", "marker": "P3", "axis": "y", "reduce": "min"},
                        {"name": "drift", "quantity": "energy", "reduce": "ptp"},
                        {"name": "steps", "stat": "steps"}]}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(spec))
    out = tmp_path / "table.csv"
    assert main(["sweep", str(path), "--executor", "serial", "--output", str(out)]) == 0
    assert "2 cases, 2 succeeded, 0 failed" in capsys.readouterr().out
    table = pd.read_csv(out)
    assert table["foot_min_y"].nunique() == 2
    # The numbers are those of the same run made directly.
    model = linkdyn.load_model("jansen")
    data = apply_parameters(linkdyn.modelfile.to_dict(model.description),
                            {"bodies.L5.length": 0.62})
    direct = linkdyn.simulate(linkdyn.model.compile_model(linkdyn.modelfile.from_dict(data)),
                              0.1, rtol=1e-8, atol=1e-8)
    assert np.isclose(table["drift"][1], np.ptp(direct.energy), rtol=1e-12, atol=0)
    assert np.isclose(table["foot_min_y"][1], direct.marker("P3")[:, 1].min(), rtol=1e-12)
    assert table["steps"][1] == direct.stats["steps"]
    spec["outputs"][0]["reduce"] = "median"
    path.write_text(json.dumps(spec))
    assert main(["sweep", str(path)]) == 2
    assert "reduce must be one of" in capsys.readouterr().err


def test_misspelt_paths_and_options_are_refused_before_any_case_runs(tmp_path, capsys):
    import json

    from linkdyn.cli import main

    with pytest.raises(linkdyn.ModelError, match=r"'bodies.L5.lenght'.*unknown field.*lenght"):
        linkdyn.sweep("jansen", {"bodies.L5.lenght": [0.61, 0.62]},
                      run_options={"t_end": 0.1}, executor="serial")
    with pytest.raises(linkdyn.ArgumentError, match="'rtoll' is not an option of run"):
        linkdyn.sweep("jansen", {"bodies.L5.length": [0.61]},
                      run_options={"t_end": 0.1, "rtoll": 1e-6}, executor="serial")
    # run_options that are not a mapping leaked a TypeError; a progress of "yes" was True
    with pytest.raises(linkdyn.ArgumentTypeError, match="run_options must be a mapping"):
        linkdyn.sweep("jansen", {"bodies.L5.length": [0.61]}, run_options=3,
                      executor="serial")
    with pytest.raises(linkdyn.ArgumentTypeError, match="progress must be True, False"):
        linkdyn.sweep("jansen", {"bodies.L5.length": [0.61]},
                      run_options={"t_end": 0.1}, executor="serial", progress="yes")
    # A bad value (not a bad path) fails its own case only.
    table = linkdyn.sweep("jansen", {"bodies.L5.length": [0.61, -1.0]},
                          run_options={"t_end": 0.05}, executor="serial")
    assert list(table["status"]) == ["ok", "error"]
    # A table that could not be written is refused before the sweep runs.
    spec = {"model": "jansen", "run_options": {"t_end": 0.05},
            "parameters": {"bodies.L5.length": [0.61]}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(spec))
    import importlib.util

    if not any(importlib.util.find_spec(m) for m in ("pyarrow", "fastparquet")):
        assert main(["sweep", str(path), "--output", str(tmp_path / "t.parquet")]) == 2
        assert "Parquet needs pyarrow" in capsys.readouterr().err
    assert main(["sweep", str(path), "--output", str(tmp_path / "no" / "t.csv")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_sweep_files_of_the_wrong_shape_are_refused_by_name(tmp_path, capsys):
    """Found by fuzzing sweep files: parameters that were a number and a reduction that was
    a list leaked TypeErrors from the command, and an unknown stat failed every case with a
    bare KeyError. Each is now an ArgumentError that names the entry."""
    import json

    from linkdyn.cli import main

    base = {"model": "jansen", "run_options": {"t_end": 0.02},
            "parameters": {"bodies.L5.length": [0.61]},
            "outputs": [{"name": "s", "stat": "steps"}]}
    path = tmp_path / "s.json"

    def run(**change):
        spec = json.loads(json.dumps(base))
        spec.update(change)
        path.write_text(json.dumps(spec))
        code = main(["sweep", str(path), "--executor", "serial",
                     "--output", str(tmp_path / "t.csv")])
        return code, capsys.readouterr().err

    for parameters in (2.5, 3, "bodies.L5.length"):
        code, err = run(parameters=parameters)
        assert code == 2 and "parameters must be a grid" in err, err
    bad = [({"name": "d", "quantity": "energy", "reduce": ["min"]}, "outputs[0].reduce"),
           ({"name": "d", "quantity": "mass"}, "outputs[0].quantity must be one of"),
           ({"name": "m", "marker": 3, "axis": "y"}, "outputs[0].marker must be a name")]
    for spec, message in bad:
        code, err = run(outputs=[spec])
        assert code == 2 and message in err, err
    code, _ = run(outputs=[{"name": "s", "stat": "stepps"}])
    assert code == 1
    table = pd.read_csv(tmp_path / "t.csv")
    assert table["error_type"][0] == "ArgumentError"
    assert "no stat 'stepps'" in table["error_message"][0]
    with pytest.raises(linkdyn.ArgumentError, match="parameters must be a grid"):
        expand_cases(2.5)


@pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")
def test_ctrl_c_stops_a_serial_sweep_and_keeps_the_cases_done():
    """Ctrl-C interrupts the running case and ends the sweep: that case and the rest are
    "cancelled" (a case's interrupted run is not a result). Before, the interrupted run was
    recorded "ok" and the sweep went on with the next case (four cases of some 2 s each,
    here: one Ctrl-C per case to stop it)."""
    from conftest import ctrl_c_after

    model = linkdyn.chain(20)
    with ctrl_c_after(0.3):
        table = linkdyn.sweep(model, {"rtol": [1e-10] * 4},
                              run_options=dict(t_end=200.0, atol=1e-10, t_out="final"),
                              executor="serial", progress=False)
    status = table["status"].tolist()
    # Ctrl-C lands in the first case's run (or, on a slow machine, while its model is made:
    # then that case completes and the sweep stops after it)
    assert status in (["cancelled"] * 4, ["ok"] + ["cancelled"] * 3)
    import signal
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_sweep_of_equilibria_reports_markers_elements_energy_and_stats(tmp_path):
    """A sweep file over the flyball governor's slider mass with run "equilibrium": each
    case's outputs come from its equilibrium (an Equilibrium used to have no marker, so
    every case failed with an AttributeError). The closed form: each of the two vertical
    springs holds half the slider's weight, f = -m g / 2, stretched by m g / (2 K) from its
    0.5 m, and the slider hangs that far below z = 0."""
    import json

    from linkdyn.batch.sweep import load_sweep_file
    from linkdyn.models.spatial import FLYBALL

    path = tmp_path / "equilibria.json"
    path.write_text(json.dumps({
        "model": "flyball_governor", "run": "equilibrium",
        "parameters": {"bodies.slider.mass": [2.0, 4.0]},
        "outputs": [{"name": "S_z", "marker": "S", "axis": "z"},
                    {"name": "tension", "element": "spring1", "value": "force"},
                    {"name": "length", "element": "spring1", "value": "coordinate"},
                    {"name": "E", "quantity": "energy"},
                    {"name": "restarts", "stat": "restarts"},
                    {"name": "work", "quantity": "work"}]}))
    spec = load_sweep_file(path)
    table = linkdyn.sweep(spec.pop("model"), **spec)
    g, k = FLYBALL["g"], FLYBALL["stiffness"]
    for row in table.itertuples():
        # the last output names a series an equilibrium does not have: the case says so
        assert row.status == "error" and "has no 'work'" in row.error_message
    outputs = json.loads(path.read_text())
    outputs["outputs"] = outputs["outputs"][:-1]
    path.write_text(json.dumps(outputs))
    spec = load_sweep_file(path)
    table = linkdyn.sweep(spec.pop("model"), **spec)
    assert list(table["status"]) == ["ok", "ok"]
    for mass, row in zip((2.0, 4.0), table.itertuples()):
        sag = mass * g / (2.0 * k)
        assert row.S_z == pytest.approx(-sag, rel=1e-6)
        assert row.tension == pytest.approx(-mass * g / 2.0, rel=1e-9)
        assert row.length == pytest.approx(FLYBALL["rest"] + sag, rel=1e-12)
        assert row.restarts >= 1 and np.isfinite(row.E)


def test_a_sweep_file_output_of_a_point_load_names_its_component(tmp_path):
    """A point load has three components in space: a sweep file's output of it names one
    (or the norm). Before, every case failed with numpy's TypeError ("only 0-dimensional
    arrays can be converted"). A free puck of mass m pushed by (3, 0, F) N under gravity:
    the load's outputs are the law's values, and the puck rises by (F / m - g) T^2 / 2."""
    import json

    from linkdyn.batch.sweep import load_sweep_file

    b = linkdyn.SpatialModelBuilder("puck", gravity=(0.0, 0.0, -9.81))
    b.add_body("puck", mass=2.0, inertia=(0.01, 0.01, 0.01))
    b.add_force("push", "puck.cm", 3.0, 0.0, 4.0)
    b.add_marker("c", "puck.cm")
    b.build().save(tmp_path / "puck.json")
    path = tmp_path / "push.json"

    def run(outputs):
        path.write_text(json.dumps({
            "model": str(tmp_path / "puck.json"), "executor": "serial",
            "parameters": {"forces.push.law_z": [4.0, 30.0]},
            "run_options": {"t_end": 0.5, "rtol": 1e-10, "atol": 1e-10},
            "outputs": outputs}))
        spec = load_sweep_file(path)
        return linkdyn.sweep(spec.pop("model"), progress=False, **spec)

    table = run([{"name": "push", "element": "push", "reduce": "max"}])
    for row in table.itertuples():
        assert row.status == "error" and row.error_type == "ArgumentError"
        assert "'push' is a point load with 3 components" in row.error_message
    table = run([{"name": "fz", "element": "push", "axis": "z", "reduce": "max"},
                 {"name": "fx", "element": "push", "axis": "x", "reduce": "min"},
                 {"name": "size", "element": "push", "axis": "norm", "reduce": "mean"},
                 {"name": "z", "marker": "c", "axis": "z"}])
    assert list(table["status"]) == ["ok", "ok"]
    for force, row in zip((4.0, 30.0), table.itertuples()):
        assert (row.fz, row.fx) == (force, 3.0)
        assert row.size == pytest.approx(np.hypot(3.0, force), rel=1e-15)
        assert row.z == pytest.approx(0.5 * (force / 2.0 - 9.81) * 0.5**2, rel=1e-8)
    with pytest.raises(linkdyn.errors.ArgumentError, match=r"outputs\[0\].axis must be"):
        run([{"name": "f", "element": "push", "axis": "w"}])
    table = run([{"name": "f", "element": "push", "axis": "x", "value": "coordinate"}])
    assert "point load: it has no coordinate" in table["error_message"][0]


def test_counters_stay_integers_when_a_case_fails():
    table = linkdyn.sweep("iftomm_a01", [{"rtol": 1e-8}, {"rtol": -1.0}],
                          run_options={"t_end": 0.1, "atol": 1e-8}, executor="serial",
                          progress=False)
    assert list(table["status"]) == ["ok", "error"]
    assert str(table["steps"].dtype) == "Int64"
    assert table["steps"][0] > 0 and pd.isna(table["steps"][1])


def test_the_sweep_command_names_failures_and_exits_130_when_interrupted(tmp_path, capsys):
    """A failed case's error is in the summary; Ctrl-C keeps the table, counts the cases it
    stopped as cancelled (not failed) and exits 130, as simulate and kinematics do."""
    import json

    from conftest import ctrl_c_after
    from linkdyn.cli import main

    spec = {"model": "iftomm_a01", "run": "simulate", "run_options": {"t_end": 0.1},
            "parameters": [{"rtol": 1e-8}, {"rtol": -1.0}], "executor": "serial"}
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(spec))
    assert main(["sweep", str(path)]) == 1
    out = capsys.readouterr().out
    assert "2 cases, 1 succeeded, 1 failed;" in out
    assert "case 1 failed: ArgumentError: " in out and "rtol" in out
    for workers in ("0", "-3"):   # 0 was taken for "the default"
        with pytest.raises(SystemExit):
            main(["sweep", str(path), "--workers", workers])
        assert "expected a positive whole number" in capsys.readouterr().err
    spec = {"model": "chain:20", "run": "simulate",
            "run_options": {"t_end": 200.0, "rtol": 1e-10, "atol": 1e-10, "t_out": "final"},
            "parameters": {"rtol": [1e-10] * 3}, "executor": "serial"}
    path.write_text(json.dumps(spec))
    out_csv = tmp_path / "table.csv"
    with ctrl_c_after(0.5) as caught:
        code = main(["sweep", str(path), "--output", str(out_csv)])
    out = capsys.readouterr().out
    assert code == 130
    assert "0 failed, " in out and "cancelled (interrupted)" in out
    assert set(pd.read_csv(out_csv)["status"]) <= {"ok", "cancelled"}
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


_SWEEP_SCRIPT = '''
import os, signal, sys
import linkdyn

if __name__ == "__main__":
    if sys.argv[2] == "ignore-sigint":
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # a job started with & by a script
    table = linkdyn.sweep("chain:20", {"rtol": [1e-10] * 6}, executor="process", workers=2,
                          run_options={"t_end": 400.0, "atol": 1e-10, "t_out": "final"},
                          outputs=lambda r: {"pid": os.getpid()}, progress=False)
    print("STATUS", " ".join(table["status"]), flush=True)
'''


def _worker_pids(parent):
    """The pids of the processes descended from ``parent`` (Linux /proc)."""
    children, found = {}, []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry))
    todo = [parent]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"   # a zombie has ended
    except OSError:
        return False


def _wait(predicate, seconds):
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc (Linux)")
@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM"])
def test_process_pool_workers_end_with_the_sweep(tmp_path, how):
    """Killed (SIGKILL) or stopped by `timeout` (SIGTERM), the sweep's process leaves no
    fork server, resource tracker or worker behind: before, a set was still running 15
    minutes later. Each case here would run for minutes."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "sweep.py"
    script.write_text(_SWEEP_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path), "default"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert _wait(lambda: len(_worker_pids(proc.pid)) >= 4, 60), "no pool started"
        pids = _worker_pids(proc.pid)   # fork server, resource tracker, two workers
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=30)
        assert _wait(lambda: not any(_alive(p) for p in pids), 20), \
            [p for p in pids if _alive(p)]
    finally:
        proc.kill()
        proc.wait()
    if how == "SIGTERM":
        assert proc.returncode == 143


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc (Linux)")
def test_ctrl_c_stops_a_pool_sweep_whose_process_ignores_sigint(tmp_path):
    """Ctrl-C at the terminal reaches the whole process group: a sweep whose own process
    ignores SIGINT (a job started with & from a script) stops all the same, at the first
    case a worker reports interrupted, with the cases not run "cancelled"."""
    import signal
    import subprocess
    import sys

    script = tmp_path / "sweep.py"
    script.write_text(_SWEEP_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path), "ignore-sigint"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert _wait(lambda: len(_worker_pids(proc.pid)) >= 4, 60), "no pool started"
        # A Ctrl-C that reaches a worker before its run starts (while it compiles the model)
        # is ignored as its parent's is: press again until the sweep has stopped.
        for _ in range(12):
            os.killpg(proc.pid, signal.SIGINT)
            try:
                out, err = proc.communicate(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        else:
            raise AssertionError("the sweep did not stop")
    finally:
        proc.kill()
        proc.wait()
    status = out.split("STATUS", 1)[1].split()
    assert len(status) == 6 and set(status) == {"cancelled"}, (out, err)
    assert "RuntimeWarning" not in err and "InterruptedWarning" not in err
