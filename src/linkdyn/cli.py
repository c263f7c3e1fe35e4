"""The ``linkdyn`` command (also ``python -m linkdyn``).

    linkdyn models                 list the built-in models
    linkdyn assemble [MODEL]       compile MODEL (built-in name or model file; default jansen)
                                   and print its consistent initial state
    linkdyn simulate [MODEL]       integrate the dynamics (see --help)
    linkdyn kinematics [MODEL]     kinematic analysis of a fully driven model (see --help)
    linkdyn sweep FILE             a parameter sweep (see --help)

MODEL is a built-in model's name, ``chain:N``, ``nfourbar:N`` or ``truss:N`` (the generators
chain(N), nfourbar(N) and truss(N)), ``iftomm_a01``, ``iftomm_a03``, or a model file.
"""

from __future__ import annotations

import argparse
import math
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from . import __version__
from .compile.model import check_output_size, kinematic_only
from .errors import ArgumentError, KinematicsError, LinkdynError, ModelError, counted
from .models import builtin_names, load_model
from ._command import (STATS_KEYS, TerminalProgress, checked_output, format_warning,
                       load_announced, plot_dir, print_defaults_used,
                       resolve_defaults, span, writable, write_markers, write_output,
                       write_trajectory)
from .solve.accuracy import estimate_error
from .solve.assembly import consistent_state, describe_rows
from .solve.kinematics import kinematics
from .solve.simulate import output_times, simulate

#: CPU time of the published Python run of the planar Jansen mechanism benchmark (its Table
#: 3: fully Cartesian coordinates after Roupa, Goncalves and Silva, 2018, index-3 DAE, BDF at
#: rtol = atol = 1e-10 over 10 s, Python on an Intel i7-8700).
PUBLISHED_SECONDS = 76.17
#: The benchmark's own settings: the comparison with the published time is made only there.
BENCHMARK = dict(model="jansen", t_end=10.0, rtol=1e-10, atol=1e-10)
#: Horizons (s) of simulate and animate for a model that names none of its own.
SIMULATE_T_END = 10.0
ANIMATE_T_END = 2.0


def _cmd_models(args) -> int:
    names = builtin_names()
    width = max(len(n) for n in names + ["nfourbar:N"]) + 2
    for name in names:
        model = load_model(name)
        # bodies (planar or spatial); a spherical or spatial linkage of points, lines and
        # planes has links in natural coordinates instead
        links = getattr(model.description, "links", None)
        what = (counted(len(links), 'link') if model.nbody == 0 and links is not None
                else counted(model.nbody, 'body', 'bodies'))
        kind = [model.space] if model.space != "planar" else []
        if kinematic_only(model):
            kind.append("kinematics only")
        print(f"{name:{width}s}{what:>11s}, "
              f"{counted(len(model.joint_names), 'joint'):>10s}, "
              f"{counted(model.nq, 'coordinate'):>15s}, "
              f"{counted(model.nc, 'constraint'):>15s}"
              + "".join(f", {k}" for k in kind))
    print(f"{'iftomm_a01':{width}s}IFToMM benchmark A01, the simple pendulum "
          "(linkdyn.models.simple_pendulum)")
    print(f"{'iftomm_a03':{width}s}IFToMM benchmark A03, Andrews' squeezing mechanism, "
          "0.03 s (linkdyn.models.andrews)")
    print(f"{'chain:N':{width}s}a hanging chain of N bars (the generator linkdyn.chain)")
    print(f"{'nfourbar:N':{width}s}IFToMM benchmark A02, N parallelogram windows "
          "(linkdyn.models.nfourbar; the benchmark uses N = 40)")
    print(f"{'truss:N':{width}s}a Warren truss of N panels swinging about its first node "
          "(linkdyn.models.truss)")
    return 0


def _cmd_assemble(args) -> int:
    t0 = time.perf_counter()
    model = load_announced(args.model)
    resolve_defaults(args, model, "redundant")
    t1 = time.perf_counter()
    state = consistent_state(model, redundant=args.redundant)
    t2 = time.perf_counter()
    kinetic, potential = model.energy(state.q, state.v)
    rank = np.linalg.matrix_rank(model.phi_q(state.q).toarray()) if model.nq <= 2000 else None
    # bodies with masses (planar ones, spatial ones in natural coordinates), or a linkage
    # of points, lines and planes, whose bodies (if any) carry placeholder masses
    bodies = not kinematic_only(model)
    what = (counted(model.nbody, 'body', 'bodies') if bodies else
            f"a {model.space} linkage of points and lines (kinematics only)")
    print(f"model {model.name}: {what}, {counted(len(model.joint_names), 'joint')}, "
          f"{counted(len(model.marker_names), 'marker')}")
    print(f"  coordinates {model.nq}, constraints {model.nc}, nonzeros in Phi_q "
          f"{model.kernels.phiq_nnz}" + (f", rank {rank}, degrees of freedom {model.nq - rank}"
                                          if rank is not None else ""))
    print(f"  consistent initial state: {state.iterations} Newton iterations, "
          f"|Phi| = {state.phi_norm:.3e}, |Phi_q v + Phi_t| = {state.velocity_norm:.3e}")
    if bodies:
        print(f"  energy: kinetic {kinetic:.10f} J, potential {potential:.10f} J, "
              f"total {kinetic + potential:.10f} J")
    positions = model.marker_positions(state.q)
    velocities = model.marker_velocities(state.v)
    for name, p, v in zip(model.marker_names, positions, velocities):
        print(f"  marker {name}: position ({', '.join(f'{x:.6f}' for x in p)}) m, "
              f"velocity ({', '.join(f'{x:.6f}' for x in v)}) m/s")
    print(f"  compile {1e3 * (t1 - t0):.2f} ms, consistent state {1e3 * (t2 - t1):.2f} ms")
    print_defaults_used(args)
    return 0


def _cmd_export(args) -> int:
    from .exchange.write import save_mjcf, save_urdf

    model = load_announced(args.model)
    out = str(args.output)
    if out.endswith(".urdf"):
        path = save_urdf(model, out)
    elif out.endswith(".xml"):
        path = save_mjcf(model, out)
    else:
        raise ArgumentError(f"export: the output {out!r} must end in .xml (MJCF) or .urdf")
    print(f"wrote {path}: model {model.name} as {'URDF' if out.endswith('.urdf') else 'MJCF'}")
    return 0


def _cmd_simulate(args) -> int:
    checked_output(args.output)
    writable(args.stats_json, "--stats-json")
    plot_dir(args.plot)
    model = load_announced(args.model)
    resolve_defaults(args, model, "t_end", "redundant")
    if args.t_end is None:
        args.t_end = SIMULATE_T_END
    shown = TerminalProgress(args.t_end) if sys.stderr.isatty() else None
    options = dict(rtol=args.rtol, atol=args.atol, dt_out=args.dt_out,
                   proportional=not args.per_step_tolerance, progress=shown,
                   method=args.method, redundant=args.redundant)
    estimate = None
    try:
        if args.estimate_error:
            estimate = estimate_error(model, args.t_end, **options)
            result = estimate.result
        else:
            result = simulate(model, args.t_end, **options)
    finally:
        if shown is not None:
            shown.clear()
    st = result.stats
    energy = result.energy
    local = (f"local error test at {st['local_rtol']:.3g}, {st['local_atol']:.3g}"
             if st["bdf_steps"] else
             f"explicit method, local error test at {st['rk_local_rtol']:.3g}, "
             f"{st['rk_local_atol']:.3g}")
    print(f"model {model.name}: {counted(model.nbody, 'body', 'bodies')}, "
          f"{counted(model.nq, 'coordinate')}, {counted(model.nc, 'constraint')}; "
          f"t = 0 .. {result.t[-1]:g} s, rtol {args.rtol:g}, atol {args.atol:g} ({local})"
          + ("" if result.status == "success" else f" ({result.status})"))
    work = []
    if st["bdf_steps"]:
        work.append(f"{st['bdf_steps']} BDF steps, {st['newton_iterations']} Newton iterations, "
                    f"{st['factorizations']} factorisations")
    if st["rk_steps"]:
        work.append(f"{st['rk_steps']} explicit steps, {st['rhs_evaluations']} right-hand "
                    "sides" + (" (straight-line Schur code)"
                               if st.get("schur_kernels") == "generated" else ""))
    if st["switches_to_bdf"]:
        work.append(f"{st['switches_to_bdf']} switches to BDF")
    if st["cost_trials"]:
        work.append(f"{st['cost_trials']} cost trials ({st['trials_kept']} kept)")
    print(f"  integration {st['integration_seconds'] * 1e3:.1f} ms: "
          f"{', '.join(work) or '0 steps'}; {st['rejected_steps']} rejected; "
          f"output {st['output_seconds'] * 1e3:.1f} ms ({len(result.t)} rows)")
    if _is_benchmark(args) and result.status == "success":
        run_seconds = st["integration_seconds"] + st["output_seconds"]
        print(f"  {PUBLISHED_SECONDS / run_seconds:.0f}x faster than the published Python run "
              f"of this benchmark ({PUBLISHED_SECONDS} s on an Intel i7-8700, Table 3 of the "
              "planar Jansen mechanism benchmark; fully Cartesian coordinates after Roupa, "
              "Goncalves and Silva, 2018), integration and output")
    print(f"  energy variation {np.ptp(energy):.3e} J, max |Phi| {result.phi_norm.max():.3e}, "
          f"max |Phi_q v + Phi_t| {result.phid_norm.max():.3e}")
    driven = model.kernels.driver_work_index >= 0
    if model.force_names or driven:
        parts = []
        if model.force_names:
            parts.append(f"force elements {len(model.force_names)}: work "
                         f"{result.force_work[-1]:.6e} J")
        if driven:
            parts.append(f"drivers {len(model.driver_names)}: work "
                         f"{result.driver_work[-1]:.6e} J")
        print(f"  {'; '.join(parts)} at t = {result.t[-1]:g} s; energy balance "
              f"max |E - E(0) - W| {np.abs(energy - energy[0] - result.work).max():.3e} J")
    for name in model.marker_names:
        p = result.marker(name)[-1]
        print(f"  marker {name} at t = {result.t[-1]:g} s: "
              f"({', '.join(f'{x:.9f}' for x in p)}) m")
    print_defaults_used(args)
    if estimate is not None:
        _print_estimate(estimate, args)
    if args.output:
        write_output(result, args.output, write_trajectory)
    if args.stats_json:
        with open(args.stats_json, "w", encoding="utf-8") as f:
            json.dump({k: st[k] for k in STATS_KEYS}, f, indent=2)
        print(f"  wrote {args.stats_json}")
    if args.plot:
        from .results.plotting import plot_simulation

        for path in plot_simulation(result, args.plot):
            print(f"  wrote {path}")
    if estimate is not None and estimate.status != "success":
        return 130
    return 0 if result.status == "success" else 130


def _is_benchmark(args) -> bool:
    """The run is the Jansen benchmark as published: the model, span and tolerances."""
    return (args.model == BENCHMARK["model"] and args.t_end == BENCHMARK["t_end"]
            and args.rtol == BENCHMARK["rtol"] and args.atol == BENCHMARK["atol"]
            and not args.per_step_tolerance)


def _print_estimate(estimate, args) -> None:
    """The estimated global error (linkdyn.estimate_error): the largest over the run of the
    coordinates and of each marker, with the time it occurs."""
    if estimate.reference is None or estimate.t.size == 0:
        print("  estimated global error: not made (the run was interrupted)")
        return
    st = estimate.reference.stats
    print(f"  estimated global error, from a second run at rtol {args.rtol / estimate.refine:g}"
          f" ({st['steps']} steps, {st['integration_seconds'] * 1e3:.1f} ms)"
          + ("" if estimate.status == "success" else f" ({estimate.status}: "
             f"up to t = {estimate.t[-1]:g} s)") + ":")
    errors = estimate.q.max(axis=1)
    i = int(np.argmax(errors))
    print(f"    coordinates up to {errors[i]:.2e} (t = {estimate.t[i]:g} s)")
    for name in estimate.result.model.marker_names:
        errors = estimate.marker(name)
        i = int(np.argmax(errors))
        print(f"    marker {name} up to {errors[i]:.2e} m (t = {estimate.t[i]:g} s)")


def _cmd_animate(args) -> int:
    from .results.animation import AnimationError, _writer

    # --html alone writes the page; a GIF or MP4 as well only when --output asks for one.
    output = args.output
    if output is None and args.html is None:
        output = "linkdyn.gif"
    if output is not None:
        writable(output, "--output")
        _writer(Path(output), args.fps)   # an unknown format or no ffmpeg: say so now
    if args.html is not None:
        writable(args.html, "--html")
    model = load_announced(args.model)
    # A linkage with kinematics only is analysed, not simulated (its own default).
    kinematic = args.kinematics or kinematic_only(model)
    resolve_defaults(args, model, "t_end", "redundant", "at_limit")
    if args.t_end is None:
        args.t_end = ANIMATE_T_END
    if args.speed is None:   # a model's own short horizon still lasts 2 s of animation
        args.speed = (min(1.0, args.t_end / ANIMATE_T_END)
                      if args.t_end == model.run_defaults.get("t_end") else 1.0)
    # Outputs at least as often as the frames need them.
    dt = min(args.dt_out, args.speed / args.fps)
    if kinematic:
        result = kinematics(model, output_times(0.0, args.t_end, dt), redundant=args.redundant,
                            at_limit=args.at_limit)
    else:
        result = simulate(model, args.t_end, rtol=args.rtol, atol=args.rtol, dt_out=dt,
                          redundant=args.redundant)
    if result.status != "success":
        print(f"linkdyn: the run stopped at t = {result.t[-1]:g} s ({result.status}); "
              "animating what was computed", file=sys.stderr)
    written = []
    try:
        if output is not None:
            written.append(result.animate(output, fps=args.fps, speed=args.speed))
    except AnimationError as exc:
        raise ArgumentError(str(exc)) from None
    if args.html is not None:
        written.append(result.to_html(args.html, fps=min(args.fps, 20.0), speed=args.speed))
    limits = getattr(result, "limits", ())
    back = (f" (the input run back at {counted(len(limits), 'limit position')})"
            if limits else "")
    print(f"model {model.name}: {'kinematics' if kinematic else 'dynamics'}, "
          f"{span(result)}{back}; wrote {' and '.join(str(p) for p in written)}")
    print_defaults_used(args)
    return 0 if result.status == "success" else 130


def _turn_time(model):
    """The time of one turn of the model's input, when it turns at a constant rate (a
    crank, a linkage's input joint); else None."""
    laws = model.driver_laws
    if len(laws) != 1 or not model.input_turns:
        return None
    law = laws[0][1]
    if law.kind != "linear" or law.params[1] == 0.0:
        return None
    return 2.0 * math.pi / abs(law.params[1])


def _cmd_kinematics(args) -> int:
    checked_output(args.output)
    plot_dir(args.plot)
    model = load_announced(args.model)
    resolve_defaults(args, model, "t_end", "redundant", "at_limit")
    if args.metrics and model.space != "planar":     # before the sweep, not after it
        raise ModelError(f"--metrics: model {model.name!r} is {model.space}; the design "
                         "metrics are for planar models (a spherical or spatial linkage has "
                         "no single plane of motion)")
    turn = _turn_time(model)
    if args.t_end is None:
        args.t_end = turn if turn is not None else 1.0
    if args.dt is None:
        args.dt = turn / 360.0 if turn is not None else 0.001
    # Before any array exists: the positions, velocities and accelerations of every time
    # (and the times themselves) must fit.
    check_output_size(int(min(args.t_end / args.dt, 1e18)) + 2, 3 * model.nq + 2,
                      f"kinematics of model {model.name!r}")
    times = output_times(0.0, args.t_end, args.dt)
    stopped = None
    shown = TerminalProgress(args.t_end, unit="positions") if sys.stderr.isatty() else None
    try:
        result = kinematics(model, times, on_singular="continue" if args.continue_singular
                            else "raise", progress=shown, redundant=args.redundant,
                            at_limit=args.at_limit)
    except KinematicsError as exc:
        if exc.result is None or not args.continue_singular:
            raise
        # --continue-singular: the sweep cannot go on; keep and write what was solved.
        stopped, result = exc, exc.result
    finally:
        if shown is not None:
            shown.clear()
    st = result.stats
    note = ""
    if stopped is not None:
        note = f" (stopped: {len(result.t)} of {len(times)} positions solved)"
    elif result.status != "success":
        note = f" (interrupted: {len(result.t)} of {len(times)} positions solved)"
    print(f"model {model.name}: {model.nq} coordinates, "
          f"{counted(len(model.driver_names), 'driver')}; "
          f"{len(result.t)} positions, {span(result)}" + note)
    if stopped is not None:
        print(f"  {stopped}")
    print(f"  sweep {st['sweep_seconds'] * 1e3:.2f} ms: {st['newton_iterations']} Newton "
          f"iterations, {st['factorizations']} factorisations; smallest reciprocal condition "
          f"estimate {result.rcond.min() if len(result.rcond) else float('nan'):.2e}")
    if result.limits:
        print(f"  {counted(len(result.limits), 'limit position')} passed, the input run back "
              f"there (input t = {', '.join(f'{t_lim:.6g}' for t_lim, _ in result.limits)} s)")
    for s in result.singularities:
        print(f"  singular configuration at t = {s.t:.6g} s: "
              f"{describe_rows(model, s.constraints) or 'rows not diagnosed'}")
    print_defaults_used(args)
    if args.output:
        write_output(result, args.output,
                      lambda r, path: write_markers(r, path, clock=times[:len(r.t)]))
    report = None
    if args.metrics:
        from .design.report import cycle_metrics, format_cycle_metrics

        report = cycle_metrics(result)
        print("design metrics:")
        for line in format_cycle_metrics(report):
            print(line)
    if args.plot:
        from .results.plotting import plot_kinematics

        paths = plot_kinematics(result, args.plot)
        if report is not None:
            from .design.report import plot_cycle_metrics

            paths.append(plot_cycle_metrics(report, args.plot))
        print(f"  wrote {counted(len(paths), 'plot')} into {args.plot}")
    if stopped is not None:
        return 1
    return 0 if result.status == "success" else 130


def _parquet_engine() -> bool:
    """Whether pandas can write Parquet here (pyarrow or fastparquet installed)."""
    import importlib.util

    return any(importlib.util.find_spec(m) is not None for m in ("pyarrow", "fastparquet"))


def _cmd_sweep(args) -> int:
    from .batch.sweep import load_sweep_file, sweep

    kwargs = load_sweep_file(args.file)
    out = args.output
    if out and not out.endswith((".csv", ".parquet")):
        raise ArgumentError(f"--output {out}: the file name must end in .csv or .parquet")
    if out:
        writable(out, "--output")
        if out.endswith(".parquet") and not _parquet_engine():
            # Checked before the sweep runs: its results would be lost at the end.
            raise ArgumentError(f"--output {out}: writing Parquet needs pyarrow (pip install "
                                "pyarrow) or fastparquet; or write .csv")
    if args.executor:
        kwargs["executor"] = args.executor
    if args.workers is not None:
        kwargs["workers"] = args.workers
    table = sweep(kwargs.pop("model"), kwargs.pop("parameters"), progress=None, **kwargs)
    status = table["status"]
    ok, failed = int((status == "ok").sum()), int((status == "error").sum())
    cancelled = len(table) - ok - failed
    print(f"sweep {args.file}: {counted(len(table), 'case')}, {ok} succeeded, "
          f"{failed} failed" + (f", {cancelled} cancelled (interrupted)" if cancelled else "")
          + f"; {table['seconds'].sum():.2f} s of case time")
    for i in np.flatnonzero((status == "error").to_numpy())[:SWEEP_ERRORS_SHOWN]:
        row = table.iloc[i]
        when = (f" at t = {row['error_t']:g} s" if "error_t" in table.columns
                and not _missing(row["error_t"]) else "")
        print(f"  case {i} failed: {row['error_type']}{when}: {row['error_message']}")
    if failed > SWEEP_ERRORS_SHOWN:
        print(f"  ... and {failed - SWEEP_ERRORS_SHOWN} more failed cases (status, error_type "
              "and error_message in the table)")
    if out:
        if out.endswith(".csv"):
            table.to_csv(out, index=False)
        else:
            table.to_parquet(out, index=False)
        print(f"  wrote {out}")
    else:
        print(table.to_string(index=False))
    if cancelled:
        return 130   # interrupted, as simulate and kinematics
    return 0 if ok == len(table) else 1


#: Failed cases whose errors the sweep command prints (the table has them all).
SWEEP_ERRORS_SHOWN = 5


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _cmd_gait(args) -> int:
    from .elements.events import passes
    from .solve.periodic import PeriodicOrbitError, periodic_orbit

    plot_dir(args.plot)
    model = load_announced(args.model)
    missing = [b for b in ("leg1", "leg2") if b not in model.body_names]
    if missing or "hip" not in model.marker_names or len(model.force_info["contacts"]) != 2:
        raise ArgumentError(f"model {model.name!r} is not a walker (it needs bodies leg1, leg2, "
                            "a marker hip and two foot contacts: see linkdyn.models.walker)")
    result = simulate(model, args.t_end, rtol=args.rtol, atol=args.rtol * 1e-2,
                      dt_out=args.dt_out)
    st = result.stats
    hip = result.marker("hip")
    strikes = [e for e in result.events if e.name in ("foot1", "foot2") and e.direction == 1]
    fell = bool(hip[:, 1].min() < 0.5 * hip[0, 1])
    print(f"model {model.name}: t = 0 .. {result.t[-1]:g} s, rtol {args.rtol:g}"
          + ("" if result.status == "success" else f" ({result.status})"))
    print(f"  integration {st['integration_seconds'] * 1e3:.1f} ms: {st['steps']} steps, "
          f"{st['events']} events, {st.get('friction_decisions', 0)} friction LCPs; output "
          f"{st['output_seconds'] * 1e3:.1f} ms ({len(result.t)} rows)")
    print(f"  {counted(len(strikes), 'touchdown')}; hip moved "
          f"{hip[-1, 0] - hip[0, 0]:.4f} m down the slope"
          + ("; the walker FELL (hip below half its height)" if fell else ""))
    counts = {}
    for _, name, mode in result.friction_modes:
        counts.setdefault(name, {}).setdefault(mode, 0)
        counts[name][mode] += 1
    for name, c in sorted(counts.items()):
        print(f"  {name}: " + ", ".join(f"{mode} {n}" for mode, n in sorted(c.items())))
    balance = np.abs(result.energy - result.energy[0] - result.work).max()
    print(f"  energy lost {-(result.energy[-1] - result.energy[0]):.6f} J; "
          f"balance max |E - E(0) - W| {balance:.3e} J")
    if args.orbit and not fell:
        i = int(np.searchsorted(result.t, 0.8 * result.t[-1]))
        try:
            orbit = periodic_orbit(model, passes("foot1"), result.q[i], result.v[i],
                                   swinging=result.swinging_at(result.t[i]),
                                   translation="x")
        except PeriodicOrbitError as exc:
            print(f"  periodic orbit: not found ({_why_no_orbit(result, strikes) or exc})")
        else:
            mods = np.abs(orbit.multipliers)
            print(f"  periodic orbit: period {orbit.period:.6f} s, stride {orbit.shift:.6f} m, "
                  f"{orbit.iterations} Newton iterations, residual {orbit.residual:.2e}")
            print(f"  Floquet multipliers |lambda|: {', '.join(f'{m:.4f}' for m in mods[:6])}"
                  f" -> {'stable' if orbit.stable else 'UNSTABLE'}")
    if args.plot:
        from .results.plotting import plot_gait

        for path in plot_gait(result, args.plot):
            print(f"  wrote {path}")
    return 0 if result.status == "success" and not fell else 1


def _why_no_orbit(result, strikes) -> str | None:
    """Why a walker has no limit cycle where its steps say so: each shorter than the last
    (it is coming to rest, as gait IV stands still after some 40 s)."""
    hip_x = result.marker("hip")[:, 0]
    at = np.searchsorted(result.t, sorted(e.t for e in strikes))
    steps = np.diff(hip_x[np.minimum(at, len(hip_x) - 1)])
    if len(steps) >= 3 and np.all(np.diff(np.abs(steps)) < 0):
        return (f"the walker is coming to rest: each of its {len(steps)} steps is shorter than "
                f"the last, from {abs(steps[0]):.4f} m to {abs(steps[-1]):.4f} m")
    return None


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got "
                                         f"{text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


_positive_int.__name__ = "positive whole number"


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (np.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


_positive_float.__name__ = "positive number"   # argparse names the type in its messages


def _accept_negative_numbers(parser):
    """Let values such as -1e-6 reach the type check (which then says what is expected)
    instead of being taken for options; argparse only recognises plain negative decimals."""
    parser._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
    parser._has_negative_number_optionals = []


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linkdyn", description="Kinematics and dynamics of "
                                     "planar mechanisms in fully Cartesian coordinates and of "
                                     "spatial ones in natural coordinates. MODEL is a built-in "
                                     "model's name, chain:N, nfourbar:N, iftomm_a01 or a model "
                                     "file.")
    _accept_negative_numbers(parser)
    parser.add_argument("--version", action="version", version=f"linkdyn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_parser = sub.add_parser

    def add_parser(*args, **kwargs):
        p = _add_parser(*args, **kwargs)
        _accept_negative_numbers(p)
        return p

    sub.add_parser = add_parser
    p = sub.add_parser("models", help="list the built-in models")
    p.set_defaults(func=_cmd_models)
    p = sub.add_parser("assemble", help="compile a model and print its consistent initial state")
    p.add_argument("model", nargs="?", default="jansen",
                   help="built-in model name or model file (default: jansen)")
    _add_redundant(p)
    p.set_defaults(func=_cmd_assemble)
    p = sub.add_parser("export", help="write a spatial model as MJCF (.xml) or URDF (.urdf)")
    p.add_argument("model", help="built-in model name or model file")
    p.add_argument("output", help="the file to write: .xml for MJCF, .urdf for URDF")
    p.set_defaults(func=_cmd_export)
    _add_simulate(sub)
    _add_kinematics(sub)
    _add_animate_gait_sweep(sub)
    return parser


def _add_redundant(p) -> None:
    p.add_argument("--redundant", choices=("raise", "allow"), default=None,
                   help="redundant constraints: refuse them (raise, the default unless the "
                   "model says otherwise) or accept consistent ones with least-norm "
                   "reactions (allow; bricard, IFToMM A04, allows them by its own default)")


def _add_at_limit(p, when: str = "") -> None:
    p.add_argument("--at-limit", choices=("raise", "reverse"), default=None,
                   help=f"{when}where the input reaches a limit position and cannot go on: "
                   "stop there (raise, the default unless the model says otherwise) or pass "
                   "onto the other branch and run the input back (reverse, as often as limits "
                   "come; t is then the input's schedule; spherical_watt1, whose input rocks, "
                   "reverses by its own default)")


def _add_simulate(sub) -> None:
    p = sub.add_parser("simulate", help="integrate the dynamics of a model",
                       description="Integrate the equations of motion with linkdyn's "
                       "integrator (the index-3 BDF, or the explicit method: --method) and "
                       "report work, timing and invariants.")
    p.add_argument("model", nargs="?", default="jansen",
                   help="built-in model name or model file (default: jansen)")
    p.add_argument("--t-end", type=_positive_float, default=None,
                   help="end time in s (default: the model's own, else 10)")
    p.add_argument("--rtol", type=_positive_float, default=1e-10,
                   help="relative tolerance (1e-10; the Python API's default is 1e-8)")
    p.add_argument("--atol", type=_positive_float, default=1e-10,
                   help="absolute tolerance (1e-10; the Python API's default is 1e-8)")
    p.add_argument("--dt-out", type=_positive_float, default=0.01,
                   help="output interval in s (0.01)")
    _add_redundant(p)
    p.add_argument("--method", choices=("bdf", "rk", "auto"), default="auto",
                   help="integration method (default auto: the explicit order-8 method, "
                   "switching to bdf where stiff; rk: explicit only; bdf: the index-3 BDF "
                   "only; see linkdyn.simulate)")
    p.add_argument("--per-step-tolerance", action="store_true",
                   help="test the local error against rtol and atol themselves (default: "
                   "tolerance-proportional, see linkdyn.simulate)")
    p.add_argument("--estimate-error", action="store_true",
                   help="estimate the global error from a second run with tolerances 100 "
                   "times tighter (linkdyn.estimate_error; 2.5 to 3.5 times the work)")
    p.add_argument("--output", metavar="FILE",
                   help="write the trajectory as plain text (a FILE ending in .html: the "
                   "interactive page, as animate --html)")
    p.add_argument("--stats-json", metavar="FILE", help="write the work counters as JSON")
    p.add_argument("--plot", metavar="DIR", help="write PNG plots into DIR")
    p.set_defaults(func=_cmd_simulate)


def _add_kinematics(sub) -> None:
    p = sub.add_parser("kinematics", help="kinematic analysis of a fully driven model",
                       description="Positions, velocities and accelerations of a model whose "
                       "degrees of freedom are all driven, with singularity detection.")
    p.add_argument("model", nargs="?", default="jansen_driven",
                   help="built-in model name or model file (default: jansen_driven)")
    p.add_argument("--t-end", type=_positive_float, default=None,
                   help="end time in s (default: the model's own, else one turn of an input "
                   "that turns at a constant rate, else 1)")
    p.add_argument("--dt", type=_positive_float, default=None,
                   help="time step in s (default: 0.001, or a 360th of the input's turn)")
    p.add_argument("--continue-singular", action="store_true",
                   help="record singular configurations and go on instead of stopping; where "
                   "the sweep cannot go on, write what was solved (exit status 1)")
    _add_at_limit(p)
    p.add_argument("--output", metavar="FILE",
                   help="write marker positions, velocities, accelerations as text (a FILE "
                   "ending in .html: the interactive page)")
    p.add_argument("--plot", metavar="DIR", help="write PNG plots into DIR")
    p.add_argument("--metrics", action="store_true",
                   help="print design metrics (planar models): transmission angles and dead "
                   "centres, limit positions, coupler-curve features, input torques "
                   "(kinetostatics); with --plot also metrics.png")
    _add_redundant(p)
    p.set_defaults(func=_cmd_kinematics)


def _add_animate_gait_sweep(sub) -> None:
    p = sub.add_parser("animate", help="simulate (or analyse) a model and write an animation",
                       description="Run a model (dynamics by default, kinematics with "
                       "--kinematics) and write a GIF (Pillow) or MP4 (ffmpeg) of its bars, "
                       "joints and marker traces, or with --html an interactive page.")
    p.add_argument("model", nargs="?", default="jansen",
                   help="built-in model name or model file (default: jansen)")
    p.add_argument("--output", metavar="FILE", default=None,
                   help="the animation, .gif or .mp4 (default linkdyn.gif, unless only "
                   "--html is asked for)")
    p.add_argument("--html", metavar="FILE", default=None,
                   help="also (or only) write one self-contained interactive HTML page: "
                   "the mechanism with a time slider, play button and plotted series "
                   "(needs plotly)")
    p.add_argument("--t-end", type=_positive_float, default=None,
                   help="end time in s (default: the model's own, else 2)")
    p.add_argument("--kinematics", action="store_true",
                   help="kinematic analysis of a fully driven model instead of dynamics "
                   "(the default for a linkage with kinematics only)")
    _add_at_limit(p, "with --kinematics, ")
    p.add_argument("--rtol", type=_positive_float, default=1e-8,
                   help="tolerance of the dynamics, rtol = atol (1e-8)")
    p.add_argument("--dt-out", type=_positive_float, default=0.01,
                   help="largest output interval in s (0.01; smaller when the frames need it)")
    p.add_argument("--fps", type=_positive_float, default=25.0,
                   help="frames per second (25)")
    p.add_argument("--speed", type=_positive_float, default=None,
                   help="simulated seconds per second of animation (1; for a model's own "
                   "horizon under 2 s, that horizon / 2 s)")
    _add_redundant(p)
    p.set_defaults(func=_cmd_animate)
    p = sub.add_parser("gait", help="simulate a passive walker (walker_gait1, ...), report "
                       "its gait and plot it")
    p.add_argument("model", nargs="?", default="walker_gait1",
                   help="a walker model (default walker_gait1)")
    p.add_argument("--t-end", type=_positive_float, default=10.0, help="end time [s] (10)")
    p.add_argument("--rtol", type=_positive_float, default=1e-9,
                   help="relative tolerance (1e-9; atol = rtol / 100)")
    p.add_argument("--dt-out", type=_positive_float, default=1e-3,
                   help="output interval [s] (1e-3)")
    p.add_argument("--orbit", action="store_true",
                   help="find the limit cycle (Newton shooting on the section where foot1 "
                        "passes foot2) and print its Floquet multipliers")
    p.add_argument("--plot", metavar="DIR", help="write gait.png and contacts.png into DIR")
    p.set_defaults(func=_cmd_gait)
    p = sub.add_parser("sweep", help="run a parameter sweep described in a sweep file",
                       description="Run the cases of a sweep file (JSON: model, parameters, "
                       "run, run_options, outputs, executor, workers; see linkdyn.sweep) and "
                       "write the table.")
    p.add_argument("file", help="sweep file (JSON)")
    p.add_argument("--output", metavar="FILE", help="write the table as .csv or .parquet")
    p.add_argument("--executor", choices=("serial", "process", "dask"),
                   help="where the cases run (default: the file's, else a process pool)")
    p.add_argument("--workers", type=_positive_int, help="number of worker processes")
    p.set_defaults(func=_cmd_sweep)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    previous = warnings.formatwarning
    warnings.formatwarning = format_warning
    try:
        return args.func(args)
    except (LinkdynError, ValueError) as exc:
        print(f"linkdyn: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("linkdyn: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (e.g. `| head`) went away: stop quietly, and keep Python's exit-time
        # flush from failing on the closed pipe too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    finally:
        warnings.formatwarning = previous


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
