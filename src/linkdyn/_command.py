"""The ``linkdyn`` command's helpers (linkdyn.cli holds the commands): loading a model
with a notice on long builds, the model's own run defaults filled into the options, output
paths checked before a run, the text files the commands write, the terminal's progress line
and one-line warnings."""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from .errors import ArgumentError, counted
from .models import load_model

#: Seconds a model may take to load before the command says it is building it.
BUILD_NOTICE_SECONDS = 1.0


def load_announced(name):
    """load_model, with a line on stderr when the build takes longer than
    BUILD_NOTICE_SECONDS (a truss of 10^5 panels builds for a minute): on a terminal it
    counts the seconds as they pass; then the build's time and size."""
    import threading

    started = time.perf_counter()
    done = threading.Event()
    shown = threading.Event()
    live = sys.stderr.isatty()

    def notice():
        if done.wait(BUILD_NOTICE_SECONDS):
            return
        shown.set()
        while True:
            elapsed = time.perf_counter() - started
            print(f"\rlinkdyn: building model {name} ... {elapsed:.0f} s" if live else
                  f"linkdyn: building model {name} ...", end="" if live else "\n",
                  file=sys.stderr, flush=True)
            if not live or done.wait(1.0):
                return

    watcher = threading.Thread(target=notice, name="linkdyn-build-notice", daemon=True)
    watcher.start()
    try:
        model = load_model(name)
    finally:
        done.set()
        watcher.join()
    if shown.is_set():
        print(f"{chr(10) if live else ''}linkdyn: built model {name} in "
              f"{time.perf_counter() - started:.1f} s ({counted(model.nq, 'coordinate')}, "
              f"{counted(model.nc, 'constraint')})", file=sys.stderr, flush=True)
    return model


#: What the command uses where neither its options nor the model's run defaults
#: (linkdyn.elements.run_defaults) say otherwise.
COMMAND_DEFAULTS = {"redundant": "raise", "at_limit": "raise"}


def resolve_defaults(args, model, *keys) -> None:
    """Fill the options the user did not give (None) from the model's run defaults, then
    from COMMAND_DEFAULTS; ``args.defaults_used`` lists those the model supplied."""
    used = getattr(args, "defaults_used", [])
    for key in keys:
        if getattr(args, key, None) is not None:
            continue
        if key in model.run_defaults:
            value = model.run_defaults[key]
            setattr(args, key, value)
            used.append(f"--{key.replace('_', '-')} "
                        + (f"{value:g}" if isinstance(value, float) else value))
        elif key in COMMAND_DEFAULTS:
            setattr(args, key, COMMAND_DEFAULTS[key])
    args.defaults_used = used


def print_defaults_used(args) -> None:
    if getattr(args, "defaults_used", None):
        print(f"  the model's own run defaults: {', '.join(args.defaults_used)} "
              "(the options override them)")


def writable(path, what):
    """Check up front that a file can be written there (before a long run): not a
    directory, in a directory that exists and can be written."""
    if path is None:
        return
    if os.path.isdir(path):
        raise ArgumentError(f"{what} {path}: is a directory (give a file name)")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ArgumentError(f"{what} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise ArgumentError(f"{what} {path}: the directory {parent} is not writable")


def plot_dir(path):
    """--plot DIR: an existing directory that can be written, or made now (with its
    parents), before the run, so that a bad DIR fails in a second and not after it."""
    if path is None:
        return
    if os.path.exists(path) and not os.path.isdir(path):
        raise ArgumentError(f"--plot {path}: exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise ArgumentError(f"--plot {path}: cannot make the directory "
                            f"({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK):
        raise ArgumentError(f"--plot {path}: the directory is not writable")


def write_trajectory(result, path) -> None:
    """Plain-text output: a header line, then one row per output time."""
    model = result.model
    cols = ["t"] + [f"{m}.{c}" for m in model.marker_names
                    for c in "xyz"[:model.marker_dimension]] + [
        "energy", "phi_norm", "phid_norm"]
    columns = [result.t, model.marker_positions(result.q).reshape(len(result.t), -1),
               result.energy, result.phi_norm, result.phid_norm]
    if model.force_names or model.kernels.driver_work_index >= 0:   # for the balance
        cols.append("work")
        columns.append(result.work)
    data = np.column_stack(columns)
    np.savetxt(path, data, fmt="%.15e", header=" ".join(cols), comments="# ")


def write_markers(result, path, clock=None) -> None:
    """A kinematic analysis as plain text: a header line, then each output time's marker
    positions, velocities and accelerations. Where the input ran back at limit positions,
    the header says so and a second column, ``clock``, gives the analysis' own times
    (``clock``, monotone; ``t`` is then the input's time, which goes back and forth)."""
    model = result.model
    axes = "xyz"[:model.marker_dimension]
    cols = ["t"] + [f"{m}.{k}{c}" for m in model.marker_names for k in ("", "v", "a")
                    for c in axes]
    data = [result.t]
    header = ""
    limits = getattr(result, "limits", ())
    if limits and clock is not None:
        cols.insert(1, "clock")
        data.append(np.asarray(clock, dtype=float))
        header = ("t is the input's time, which runs back at the limit positions (input t = "
                  + ", ".join(f"{t_lim:.9g}" for t_lim, _ in limits)
                  + " s); clock is the analysis' time, one step a row\n")
    for m in model.marker_names:
        data += [result.marker(m), result.marker_velocity(m), result.marker_acceleration(m)]
    np.savetxt(path, np.column_stack(data), fmt="%.15e", header=header + " ".join(cols),
               comments="# ")


def is_page(path) -> bool:
    return path is not None and path.lower().endswith((".html", ".htm"))


def checked_output(path) -> None:
    """--output, checked before the run: a writable place, and for a page plotly (the
    ``html`` extra), whose absence would otherwise show only after the run."""
    writable(path, "--output")
    if is_page(path):
        from .results.html import _plotly

        _plotly()


def write_output(result, path, as_text) -> None:
    """--output: plain text (``as_text``), or for a FILE ending in .html or .htm the result's
    interactive page (what ``linkdyn animate --html`` writes; a page's name written as
    columns of numbers was what a user got before)."""
    if is_page(path):
        result.to_html(path)
        print(f"  wrote {path} (interactive page)")
        return
    as_text(result, path)
    print(f"  wrote {path}")


STATS_KEYS = ("integration_seconds", "output_seconds", "steps", "rejected_steps",
              "newton_iterations", "residual_evaluations", "jacobian_evaluations",
              "factorizations")


class TerminalProgress:
    """The progress callback of simulate and kinematics for a terminal: a tqdm bar on
    stderr over the simulated time, with the work done, cleared at the end."""

    def __init__(self, t_end, stream=None, unit="steps"):
        from tqdm import tqdm

        self.unit = unit
        self.bar = tqdm(total=float(t_end), file=stream or sys.stderr, leave=False,
                        dynamic_ncols=True, unit="s",
                        bar_format="  t = {n:.4g} s of {total:g} s {percentage:3.0f}%|{bar}| "
                                   "{desc}")

    def __call__(self, t, count):
        self.bar.n = min(float(t), self.bar.total)
        self.bar.set_description_str(f"{count} {self.unit}", refresh=False)
        self.bar.refresh()

    def clear(self):
        self.bar.close()


def span(result) -> str:
    """The rows' times for a summary line. Where the input ran back at limit positions,
    t is the input's schedule (it goes back and forth): say so, with its turning points."""
    t = result.t
    if not len(t):
        return "no rows"
    limits = getattr(result, "limits", ())
    if not limits:
        return f"t = {t[0]:g} .. {t[-1]:g} s"
    turns = " -> ".join(f"{t_lim:g} (limit)" for t_lim, _ in limits)
    return (f"input time t = {t[0]:g} -> {turns} -> {t[-1]:g} s (the input runs back at each "
            "limit position, so t goes back and forth)")


def format_warning(message, category, filename, lineno, line=None) -> str:
    """Warnings on the terminal as one line each, without the library's source lines."""
    return f"linkdyn: {category.__name__}: {message}\n"
