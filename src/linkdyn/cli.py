"""The ``linkdyn`` command (also ``python -m linkdyn``).

    linkdyn models                 list the built-in models
    linkdyn assemble [MODEL]       compile MODEL (built-in name or model file; default jansen)
                                   and print its consistent initial state
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from . import __version__
from .assembly import consistent_state
from .errors import LinkdynError
from .models import builtin_names, load_model


def _cmd_models(args) -> int:
    for name in builtin_names():
        model = load_model(name)
        print(f"{name:12s} {model.nbody} bodies, {len(model.joint_names)} joints, "
              f"{model.nq} coordinates, {model.nc} constraints")
    return 0


def _cmd_assemble(args) -> int:
    t0 = time.perf_counter()
    model = load_model(args.model)
    t1 = time.perf_counter()
    state = consistent_state(model)
    t2 = time.perf_counter()
    kinetic, potential = model.energy(state.q, state.v)
    rank = np.linalg.matrix_rank(model.phi_q(state.q).toarray()) if model.nq <= 2000 else None
    print(f"model {model.name}: {model.nbody} bodies, {len(model.joint_names)} joints, "
          f"{len(model.marker_names)} markers")
    print(f"  coordinates {model.nq}, constraints {model.nc}, nonzeros in Phi_q "
          f"{model.kernels.phiq_nnz}" + (f", rank {rank}, degrees of freedom {model.nq - rank}"
                                          if rank is not None else ""))
    print(f"  consistent initial state: {state.iterations} Newton iterations, "
          f"|Phi| = {state.phi_norm:.3e}, |Phi_q v + Phi_t| = {state.velocity_norm:.3e}")
    print(f"  energy: kinetic {kinetic:.10f} J, potential {potential:.10f} J, "
          f"total {kinetic + potential:.10f} J")
    positions = model.marker_positions(state.q)
    velocities = model.marker_velocities(state.v)
    for name, p, v in zip(model.marker_names, positions, velocities):
        print(f"  marker {name}: position ({p[0]:.6f}, {p[1]:.6f}) m, "
              f"velocity ({v[0]:.6f}, {v[1]:.6f}) m/s")
    print(f"  compile {1e3 * (t1 - t0):.2f} ms, consistent state {1e3 * (t2 - t1):.2f} ms")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linkdyn", description="Kinematics and dynamics of "
                                     "planar mechanisms in fully Cartesian coordinates.")
    parser.add_argument("--version", action="version", version=f"linkdyn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("models", help="list the built-in models")
    p.set_defaults(func=_cmd_models)
    p = sub.add_parser("assemble", help="compile a model and print its consistent initial state")
    p.add_argument("model", nargs="?", default="jansen",
                   help="built-in model name or model file (default: jansen)")
    p.set_defaults(func=_cmd_assemble)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except LinkdynError as exc:
        print(f"linkdyn: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("linkdyn: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
