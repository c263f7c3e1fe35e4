"""Parameter sweeps: many runs of one model with varied parameters, serially, on a local
process pool or on a Dask cluster.

    table = linkdyn.sweep("jansen", {"bodies.L1.length": [0.14, 0.15],
                                     "bodies.L1.omega": [-6.0, -7.0]},
                          run="simulate", run_options={"t_end": 2.0, "rtol": 1e-8},
                          outputs=lambda r: {"foot_min_y": r.marker("P3")[:, 1].min()})

Parameters. A parameter is either an option of the run (``t_end``, ``rtol``, ``atol``, ...:
any keyword of the run function) or a path into the model's file form
(:mod:`linkdyn.describe.parameters`): ``gravity``, ``ground.<point>``,
``bodies.<name>.<field>``, ``joints.<name>.<field>``, ``drivers.<name>.law.<field>``,
``forces.<name>.<field>``, ``contacts.<name>.<field>``, a component such as
``bodies.crank.points.B.x``, each validated as a model file is. ``parameters`` is a grid (a
mapping name -> values: every combination, the last name varying fastest) or a list of cases
(mappings name -> value).
Instead of a model, a factory ``factory(case) -> Model`` may build each case's model from the
case's model parameters (the names that are not run options).

What runs. ``run`` is ``"simulate"``, ``"kinematics"`` (times from run options ``t_end``
and ``dt``), ``"equilibrium"``, or a callable ``run(model, **options)``; ``outputs(result)``
returns a mapping of named values (or one value: column ``output``) and runs where the case
runs, so only what is kept crosses between processes.

Executors. ``"serial"``; ``"process"`` (a local process pool, the default when more than one
core is present); ``"dask"`` (a ``dask.distributed.LocalCluster`` started for the sweep) or a
``dask.distributed.Client``. Models travel as their descriptions (a ``Model`` pickles as its
description and is compiled again where it is unpickled); each worker keeps the models it
compiled, so cases that change only run options reuse them. The same case gives bit-for-bit
the same numbers in every executor.

Failures. A case that raises is recorded (``status`` "error", ``error_type``,
``error_message`` and, for simulation errors, ``error_t``), and the sweep goes on. Ctrl-C
cancels the pending cases and returns the table of what finished (``status`` "cancelled"
for the others); so does a case interrupted where it runs (a worker that got the Ctrl-C of
its terminal while the sweep's own process did not, as when a script started it with
``&``). The workers of a process pool end with the sweep's process, however it ends
(Ctrl-C, ``SIGTERM`` from ``timeout``, ``SIGKILL``): each watches it and exits when it is
gone.

The result is a pandas DataFrame, one row per case in case order: the parameters, the
outputs, the run's main statistics (``steps``, ``integration_seconds``, ... when the result
has them; the counters are integers, ``<NA>`` in the rows of cases that did not finish),
``status`` and ``seconds`` (wall time of the case where it ran).
"""

from __future__ import annotations

import itertools
import os
import select
import signal
import sys
import threading
import time
import warnings
from collections.abc import Mapping

from .._checks import checked_path, input_file_problem
from ..describe.parameters import apply_parameters
from ..describe.parameters import is_model_parameter as _is_model_parameter
from ..errors import ArgumentError, ArgumentTypeError, InterruptedWarning, ModelError
from ..solve.interrupt import StopRequest

__all__ = ["sweep", "expand_cases", "apply_parameters"]

RUNS = ("simulate", "kinematics", "equilibrium")
STAT_KEYS = ("steps", "rejected_steps", "newton_iterations", "factorizations",
             "integration_seconds", "sweep_seconds", "events")
#: The statistics that count things: integer columns of the table.
COUNT_KEYS = ("steps", "rejected_steps", "newton_iterations", "factorizations", "events")


def expand_cases(parameters) -> list[dict]:
    """A grid (mapping name -> sequence of values) or a list of cases, as a list of cases."""
    if isinstance(parameters, Mapping):
        names = list(parameters)
        values = []
        for name in names:
            v = parameters[name]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                raise ArgumentError(f"sweep: the grid values of {name!r} must be a sequence, got "
                                    f"{v!r}")
            values.append(list(v))
            if not values[-1]:
                raise ArgumentError(f"sweep: the grid of {name!r} is empty")
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]
    if isinstance(parameters, (str, bytes)) or not hasattr(parameters, "__iter__"):
        raise ArgumentError("sweep: parameters must be a grid (a mapping name -> sequence of "
                            f"values) or a list of cases (mappings), got {parameters!r}")
    cases = []
    for i, case in enumerate(parameters):
        if not isinstance(case, Mapping):
            raise ArgumentError(f"sweep: case {i} must be a mapping name -> value, got {case!r}")
        cases.append(dict(case))
    if not cases:
        raise ArgumentError("sweep: no cases")
    return cases


def _check_paths(base, cases) -> None:
    """Every model parameter names an entry and a field its model file has or may have: a
    misspelt field is refused here, before any case runs, instead of failing every case."""
    from ..describe import modelfile
    from ..errors import ModelFileError

    data = modelfile.to_dict(base)
    for case in cases:
        apply_parameters(data, case)
    checked = set()
    for case in cases:
        for name, value in case.items():
            if not _is_model_parameter(name) or name == "gravity" or name in checked:
                continue
            checked.add(name)
            try:
                modelfile.from_dict(apply_parameters(data, {name: value}), path="<sweep>")
            except ModelFileError as exc:
                if "unknown field" in str(exc):
                    where = str(exc).split(": ", 1)[-1]      # without the "<sweep>" path
                    raise ModelError(f"sweep parameter {name!r}: {where}") from None
                # Any other error is the value's: that case fails on its own.


def _check_run_options(run, run_options, cases) -> None:
    """The run options (and the cases' non-model parameters) are options of the run."""
    import inspect

    from ..solve.kinematics import kinematics
    from ..solve.simulate import simulate
    from ..solve.statics import equilibrium

    function = {"simulate": simulate, "kinematics": kinematics,
                "equilibrium": equilibrium}[run]
    known = set(inspect.signature(function).parameters) - {"model", "times"}
    known |= {"simulate": {"t_end"}, "kinematics": {"t_end", "dt"}}.get(run, set())
    given = set(run_options) | {k for case in cases for k in case
                                if not _is_model_parameter(k)}
    unknown = sorted(given - known)
    if unknown:
        raise ArgumentError(f"sweep: {', '.join(repr(u) for u in unknown)} "
                            f"{'is not an option' if len(unknown) == 1 else 'are not options'}"
                            f" of run {run!r} (its options: {', '.join(sorted(known))})")


# -- what runs in a worker ------------------------------------------------------------------

_COMPILED: dict = {}   # per process: model-file text -> Model, reused across cases


def _model_for(base, factory, case):
    from ..compile.compiler import compile_model
    from ..describe import modelfile

    if factory is not None:
        return factory({k: v for k, v in case.items() if _is_model_parameter(k)})
    if not any(_is_model_parameter(k) for k in case):
        key = ("base", base)
        if key not in _COMPILED:
            _COMPILED[key] = compile_model(base)
        return _COMPILED[key]
    data = apply_parameters(modelfile.to_dict(base), case)
    key = repr(sorted(data.items(), key=lambda kv: kv[0]))
    if key not in _COMPILED:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = compile_model(modelfile.from_dict(data, path="<sweep case>"))
    return _COMPILED[key]


def _call_run(run, model, options):
    import numpy as np

    from ..solve.kinematics import kinematics
    from ..solve.simulate import simulate
    from ..solve.statics import equilibrium

    options = dict(options)
    if run == "simulate":
        t_end = options.pop("t_end", None)
        if t_end is None:
            raise ArgumentError("sweep: run 'simulate' needs the run option t_end")
        return simulate(model, t_end, **options)
    if run == "kinematics":
        t_end, dt = options.pop("t_end", None), options.pop("dt", None)
        if t_end is None or dt is None:
            raise ArgumentError("sweep: run 'kinematics' needs the run options t_end and dt")
        return kinematics(model, np.arange(0.0, t_end + 0.5 * dt, dt), **options)
    if run == "equilibrium":
        return equilibrium(model, **options)
    return run(model, **options)


def _outputs(outputs, result) -> dict:
    if outputs is None:
        return {}
    value = outputs(result)
    if isinstance(value, Mapping):
        return dict(value)
    return {"output": value}


def _stats(result) -> dict:
    stats = getattr(result, "stats", None)
    if not isinstance(stats, dict):
        return {}
    return {k: stats[k] for k in STAT_KEYS if k in stats}


def _dumps(obj) -> bytes:
    """Pickle with cloudpickle where it is installed (it comes with dask), so that lambdas
    and local functions can be outputs and factories in a process pool."""
    try:
        import cloudpickle
    except ImportError:
        import pickle

        return pickle.dumps(obj)
    return cloudpickle.dumps(obj)


def run_blob(blob: bytes, case) -> dict:
    import pickle

    return run_case(*pickle.loads(blob), case)


def run_case(base, factory, run, run_options, outputs, case) -> dict:
    """One case, where it runs (a worker process, a Dask worker or here): the row of the
    table, with the error recorded instead of raised."""
    start = time.perf_counter()
    row = {}
    try:
        model = _model_for(base, factory, case)
        options = {**run_options, **{k: v for k, v in case.items()
                                     if not _is_model_parameter(k)}}
        with warnings.catch_warnings():
            # an interrupted run's row says "cancelled": no warning line per worker
            warnings.simplefilter("ignore", InterruptedWarning)
            result = _call_run(run, model, options)
        if getattr(result, "status", None) == "interrupted":
            # Ctrl-C in the run: not a result. A row, not a KeyboardInterrupt, which a Dask
            # worker would take for its own shutdown; the serial loop stops at it.
            return {"status": "cancelled"}
        row.update(_stats(result))
        row.update(_outputs(outputs, result))
        row["status"] = "ok"
    except KeyboardInterrupt:
        raise
    except Exception as exc:   # recorded, and the sweep goes on
        row.update(status="error", error_type=type(exc).__name__, error_message=str(exc))
        if getattr(exc, "t", None) is not None:
            row["error_t"] = exc.t
    row["seconds"] = time.perf_counter() - start
    return row


# -- the sweep -------------------------------------------------------------------------------

def _progress(total, progress):
    if progress is None:
        progress = sys.stderr.isatty()
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="case", desc="linkdyn sweep")


def sweep(model, parameters, *, run="simulate", run_options=None, outputs=None,
          executor=None, workers: int | None = None, progress: bool | None = None):
    """Run ``model`` (a Model, a built-in name or model-file path, or a factory
    ``factory(case) -> Model``) for every case of ``parameters``; returns a pandas DataFrame
    (see :mod:`linkdyn.sweep` for parameters, runs, outputs, executors and failures).

    ``workers`` is the number of processes (process pool or LocalCluster; default: the
    machine's cores). ``progress`` shows a tqdm bar (default: when stderr is a terminal).
    """
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("linkdyn.sweep needs pandas (pip install 'linkdyn[sweep]')") from None
    from ..compile.model import Model, require_dynamic
    from ..models import as_model

    factory = None
    if isinstance(model, (str, os.PathLike)):
        model = as_model(model)
    if isinstance(model, Model):
        require_dynamic(model, "sweep")
        base = model.description
    elif callable(model):
        factory, base = model, None
    else:
        raise ArgumentTypeError(f"sweep: model must be a Model, a model name or path, or a "
                                f"factory, got {type(model).__name__}")
    if not ((isinstance(run, str) and run in RUNS) or callable(run)):
        raise ArgumentError(f"sweep: run must be one of {', '.join(RUNS)} or a callable, got "
                            f"{run!r}")
    if run_options is not None and not isinstance(run_options, Mapping):
        raise ArgumentTypeError("sweep: run_options must be a mapping option -> value, got "
                                f"{type(run_options).__name__}")
    run_options = dict(run_options or {})
    if progress is not None and not isinstance(progress, bool):
        raise ArgumentTypeError(f"sweep: progress must be True, False or None, got "
                                f"{progress!r}")
    if outputs is not None and not callable(outputs):
        raise ArgumentTypeError("sweep: outputs must be a callable outputs(result) -> mapping")
    cases = expand_cases(parameters)
    if base is not None:   # validate every model path up front, in this process
        _check_paths(base, cases)
    if isinstance(run, str):
        _check_run_options(run, run_options, cases)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or workers < 1):
        raise ArgumentError(f"sweep: workers must be a positive integer, got {workers!r}")

    if executor is None:
        executor = "process" if (os.cpu_count() or 1) > 1 and len(cases) > 1 else "serial"
    if not (isinstance(executor, str) or _is_dask_client(executor)):
        raise ArgumentTypeError(f"sweep: executor must be 'serial', 'process', 'dask' or a "
                                f"dask.distributed.Client, got {type(executor).__name__}")
    args = (base, factory, run, run_options, outputs)
    rows: list = [None] * len(cases)
    bar = _progress(len(cases), progress)
    try:
        if executor == "serial":
            _serial(args, cases, rows, bar)
        elif executor == "process":
            _process(args, cases, rows, bar, workers)
        elif executor == "dask" or _is_dask_client(executor):
            _dask(args, cases, rows, bar, workers, None if executor == "dask" else executor)
        else:
            raise ArgumentError(f"sweep: executor must be 'serial', 'process', 'dask' or a "
                                f"dask.distributed.Client, got {executor!r}")
    finally:
        if bar is not None:
            bar.close()
    table = []
    for case, row in zip(cases, rows):
        table.append({**case, **(row if row is not None else {"status": "cancelled"})})
    frame = pd.DataFrame(table)
    if "seconds" not in frame.columns:   # no case got to run
        frame["seconds"] = float("nan")
    for key in COUNT_KEYS:   # counts stay integers where some cases have none
        if key in frame.columns:
            frame[key] = frame[key].astype("Int64")
    return frame


def _serial(args, cases, rows, bar):
    # Ctrl-C in a run interrupts it (run_case's row says "cancelled"); between the runs (a
    # case's model compiles) it is a request checked after each case
    # (linkdyn.solve.interrupt). The rows done are kept; the rest are "cancelled".
    with StopRequest() as stop:
        try:
            for i, case in enumerate(cases):
                rows[i] = run_case(*args, case)
                if bar is not None:
                    bar.update()
                if stop.requested or rows[i]["status"] == "cancelled":
                    break
        except KeyboardInterrupt:
            pass
        stop.consume()


def watch_parent(pid: int) -> None:
    """A process-pool worker's initializer: a daemon thread that ends the worker when the
    sweep's process ``pid`` has ended (killed, or stopped by a signal that left it no time
    to shut its pool down). A worker's parent is the pool's fork server, not the sweep, so
    the kernel's parent-death signal does not reach it; a pidfd (Linux 5.3 and later)
    becomes readable when the process ends, and elsewhere the thread polls for it."""
    def watch():
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            os._exit(1)
        except (AttributeError, OSError):
            fd = None
        if fd is not None:
            select.select([fd], [], [])
        else:
            while True:
                time.sleep(0.5)
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                except PermissionError:   # there, but another user's: pid reused
                    break
        os._exit(1)

    threading.Thread(target=watch, name="linkdyn-sweep-parent", daemon=True).start()


def _process(args, cases, rows, bar, workers):
    import concurrent.futures as cf
    import multiprocessing

    # forkserver/spawn keep the workers free of the parent's threads and handlers.
    context = multiprocessing.get_context("spawn" if sys.platform != "linux" else "forkserver")
    pool = cf.ProcessPoolExecutor(max_workers=workers or os.cpu_count(), mp_context=context,
                                  initializer=watch_parent, initargs=(os.getpid(),))
    futures = {}
    blob = _dumps(args)
    previous = _exit_on_sigterm()
    try:
        futures = {pool.submit(run_blob, blob, case): i for i, case in enumerate(cases)}
        for future in cf.as_completed(futures):
            rows[futures[future]] = future.result()
            if bar is not None:
                bar.update()
            if rows[futures[future]]["status"] == "cancelled":
                # Ctrl-C reached a worker (and perhaps not this process, whose SIGINT a
                # script may have set to be ignored): stop as for a Ctrl-C here.
                raise KeyboardInterrupt
        pool.shutdown(wait=True)
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        for future, i in futures.items():   # keep what finished
            if future.done() and not future.cancelled() and future.exception() is None:
                rows[i] = future.result()
        _stop_workers(pool)
    except SystemExit:   # SIGTERM (what `timeout` sends): the pending cases are dropped
        _stop_workers(pool)
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _stop_workers(pool) -> None:
    """End a pool whose sweep stops: its queued cases dropped, its running ones ended (an
    interrupted case is "cancelled" whatever it computed; without this the interpreter's
    exit would wait for each to finish its run, minutes perhaps)."""
    # ProcessPoolExecutor has no public way to end running work; its _processes (pid ->
    # Process, emptied by shutdown) has been there since Python 3.2.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    pool.shutdown(wait=True)


def _exit_on_sigterm():
    """In the main thread, SIGTERM raises SystemExit(143) for the length of a pool sweep,
    so that the pool is shut down and its semaphores released on the way out (the workers
    end with this process in any case: watch_parent). The handler it replaced, or None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):   # someone else's handler: leave it
        return None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    return previous


def _is_dask_client(obj) -> bool:
    return type(obj).__name__ == "Client" and hasattr(obj, "submit")


def _dask(args, cases, rows, bar, workers, client):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError("sweep: executor 'dask' needs dask.distributed "
                          "(pip install 'linkdyn[sweep]')") from None
    own = client is None
    if own:
        cluster = LocalCluster(n_workers=workers or os.cpu_count(), threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    futures = {}
    try:
        base, factory, run, run_options, outputs = args
        shared = client.scatter([base, factory, run, run_options, outputs], broadcast=True)
        futures = {client.submit(run_case, *shared, case, pure=False): i
                   for i, case in enumerate(cases)}
        for future in as_completed(list(futures)):
            rows[futures[future]] = future.result()
            if bar is not None:
                bar.update()
    except KeyboardInterrupt:
        for future, i in futures.items():
            if future.status == "finished":
                rows[i] = future.result()
        client.cancel(list(futures))
    finally:
        if own:
            client.close()
            cluster.close()


def _element_series(result, name, spec):
    """An element output's series: the force or coordinate of an element along a
    coordinate, or one component (or the norm) of a point load's vector."""
    import numpy as np

    element, axis = spec["element"], spec.get("axis")
    if spec.get("value", "force") == "coordinate":
        series = result.element_coordinate(element)
    else:
        series = np.asarray(result.element_force(element), dtype=float)
    recs, _ = result.model.force_element_entries(element)
    width = 0 if recs else series.shape[-1]
    if width and axis is None:
        raise ArgumentError(f"sweep: output {name!r}: element {element!r} is a point load "
                            f"with {width} components: give the output an 'axis' (x, y"
                            f"{', z' if width == 3 else ''} or norm)")
    if not width and axis is not None:
        raise ArgumentError(f"sweep: output {name!r}: element {element!r} acts along one "
                            "coordinate: its output takes no 'axis'")
    if not width:
        return series
    if axis == "norm":
        return np.linalg.norm(series, axis=-1)
    col = "xyz".index(axis)
    if col >= width:
        raise ArgumentError(f"sweep: output {name!r}: axis 'z' needs a spatial model; "
                            f"element {element!r} has 2 components")
    return series[..., col]


# -- sweep files (the command) ----------------------------------------------------------------

SWEEP_FILE_FIELDS = ({"model", "parameters"},
                     {"run", "run_options", "outputs", "executor", "workers"})
#: The result series an output may name as its "quantity".
QUANTITIES = ("energy", "work", "phi_norm", "phid_norm", "t")
REDUCTIONS = {"min": "min", "max": "max", "mean": "mean", "final": None, "initial": None,
              "ptp": "ptp"}


class Outputs:
    """Outputs named in a sweep file, applied to a result where the case runs:

    ``{"name": "foot_min_y", "marker": "P3", "axis": "y", "reduce": "min"}``,
    ``{"name": "drift", "quantity": "energy", "reduce": "ptp"}`` (``energy``, ``work``,
    ``phi_norm``, ``phid_norm``, ``t``), ``{"name": "torque", "element": "M",
    "value": "force", "reduce": "max"}`` (``force`` or ``coordinate``),
    ``{"name": "steps", "stat": "steps"}``; ``reduce`` is one of min, max, mean, ptp,
    initial, final (default final). A point load or torque (``add_force``, a spatial
    ``add_torque``) has two or three components: its output names one, ``"axis"`` x, y or
    z, or ``"norm"``, its magnitude."""

    def __init__(self, specs):
        if not isinstance(specs, list) or not specs:
            raise ArgumentError("sweep file: outputs must be a non-empty list of objects")
        self.specs = []
        for i, spec in enumerate(specs):
            where = f"outputs[{i}]"
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                raise ArgumentError(f"sweep file: {where} must be an object with a 'name'")
            kinds = [k for k in ("marker", "quantity", "element", "stat") if k in spec]
            if len(kinds) != 1:
                raise ArgumentError(f"sweep file: {where} needs exactly one of marker, quantity, "
                                    "element, stat")
            allowed = {"name", kinds[0], "reduce"} | {"marker": {"axis"},
                                                      "element": {"value", "axis"}}.get(
                                                          kinds[0], set())
            extra = sorted(set(spec) - allowed)
            if extra:
                raise ArgumentError(f"sweep file: {where} has unknown field(s) {', '.join(extra)}")
            what = spec[kinds[0]]
            if kinds[0] == "quantity" and what not in QUANTITIES:
                raise ArgumentError(f"sweep file: {where}.quantity must be one of "
                                    f"{', '.join(QUANTITIES)}, got {what!r}")
            if not isinstance(what, str) or not what:
                raise ArgumentError(f"sweep file: {where}.{kinds[0]} must be a name (a "
                                    f"string), got {what!r}")
            reduce = spec.get("reduce", "final")
            if not isinstance(reduce, str) or reduce not in REDUCTIONS:
                raise ArgumentError(f"sweep file: {where}.reduce must be one of "
                                    f"{', '.join(REDUCTIONS)}")
            if kinds[0] == "marker" and spec.get("axis") not in ("x", "y", "z"):
                raise ArgumentError(f"sweep file: {where}.axis must be 'x', 'y' or 'z'")
            if kinds[0] == "element" and spec.get("value", "force") not in ("force",
                                                                             "coordinate"):
                raise ArgumentError(f"sweep file: {where}.value must be 'force' or 'coordinate'")
            if kinds[0] == "element" and spec.get("axis", "x") not in ("x", "y", "z", "norm"):
                raise ArgumentError(f"sweep file: {where}.axis must be 'x', 'y', 'z' or 'norm'")
            self.specs.append((spec["name"], kinds[0], spec))

    def __call__(self, result) -> dict:
        import numpy as np

        out = {}
        for name, kind, spec in self.specs:
            if kind == "stat":
                if spec["stat"] not in result.stats:
                    raise ArgumentError(f"sweep: output {name!r}: the run has no stat "
                                        f"{spec['stat']!r} (its stats: "
                                        f"{', '.join(sorted(result.stats))})")
                out[name] = result.stats[spec["stat"]]
                continue
            if kind == "marker":     # (an equilibrium's: one state, one row)
                positions = np.atleast_2d(result.marker(spec["marker"]))
                col = "xyz".index(spec["axis"])
                if col >= positions.shape[1]:
                    raise ArgumentError(f"sweep: output {name!r}: axis 'z' needs a spatial "
                                        f"model; model {result.model.name!r} is planar")
                series = positions[:, col]
            elif kind == "element":
                series = _element_series(result, name, spec)
            else:
                if not hasattr(result, spec["quantity"]):   # an equilibrium: energy, t
                    raise ArgumentError(f"sweep: output {name!r}: the run's result "
                                        f"({type(result).__name__}) has no "
                                        f"{spec['quantity']!r}")
                series = np.asarray(getattr(result, spec["quantity"]))
            how = spec.get("reduce", "final")
            series = np.atleast_1d(np.asarray(series, dtype=float))
            out[name] = float({"min": np.min, "max": np.max, "mean": np.mean,
                               "ptp": np.ptp}[how](series) if how in ("min", "max", "mean",
                                                                      "ptp")
                              else series[0] if how == "initial" else series[-1])
        return out


def load_sweep_file(path) -> dict:
    """Read and check a sweep file (JSON): model, parameters, run, run_options, outputs,
    executor, workers; returns the keyword arguments of :func:`sweep` plus ``model``."""
    import json

    problem = input_file_problem(checked_path("load_sweep_file", path))
    if problem:
        raise ArgumentError(f"cannot read the sweep file {path}: it {problem}")
    try:
        with open(checked_path("load_sweep_file", path), encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise ArgumentError(f"cannot read the sweep file {path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ArgumentError(f"sweep file {path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ArgumentError(f"sweep file {path}: expected an object")
    required, optional = SWEEP_FILE_FIELDS
    missing = sorted(required - data.keys())
    unknown = sorted(data.keys() - required - optional)
    if missing or unknown:
        raise ArgumentError(f"sweep file {path}: "
                            + (f"missing field(s) {', '.join(missing)}" if missing else "")
                            + ("; " if missing and unknown else "")
                            + (f"unknown field(s) {', '.join(unknown)}" if unknown else ""))
    kwargs = dict(model=data["model"], parameters=data["parameters"],
                  run=data.get("run", "simulate"), run_options=data.get("run_options", {}),
                  executor=data.get("executor"), workers=data.get("workers"))
    if kwargs["run"] not in RUNS:
        raise ArgumentError(f"sweep file {path}: run must be one of {', '.join(RUNS)}")
    if not isinstance(kwargs["run_options"], dict):
        raise ArgumentError(f"sweep file {path}: run_options must be an object")
    if "outputs" in data:
        kwargs["outputs"] = Outputs(data["outputs"])
    return kwargs
