"""Fingerprints of linkdyn's results: one SHA-256 digest per run of every built-in model (and
of the generated IFToMM, chain and truss models), over the exact bytes of its output arrays
and work counters.

    python ci/fingerprint.py > before.txt     # on one revision
    python ci/fingerprint.py > after.txt      # on another, same machine and environment
    diff before.txt after.txt                 # no output: bit-for-bit identical results

``--method bdf`` (or ``rk``, ``auto``) fingerprints the runs of one integration method;
without it, the default method's.

A change that should not move any result (a refactor, a comment) is checked this way. The
digests depend on the machine's libm and SuiteSparse build and on the SPD back-end (CHOLMOD or
SuperLU), so they are compared between revisions on one machine, never stored as expectations.
"""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy as np

import linkdyn
from linkdyn.models import andrews, chain, nfourbar, simple_pendulum, truss

# Work counters that are exact (wall times are not).
COUNTERS = ("steps", "rejected_steps", "newton_iterations", "residual_evaluations",
            "jacobian_evaluations", "factorizations", "events")


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is None:
            h.update(b"None")
            continue
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def dynamic(name, model, t_end, **options) -> str:
    r = linkdyn.simulate(model, t_end, **options)
    counters = [r.stats.get(k, -1) for k in COUNTERS]
    events = [(e.t, e.name) for e in r.events]
    return (f"simulate {name:<18} steps {r.stats['steps']:>7} "
            f"{digest(r.t, r.q, r.v, r.lam, r.z, np.array(counters, dtype=float))} "
            f"events {digest(np.array([e[0] for e in events]))}:{len(events)}")


def kinematic(name, model, times) -> str:
    try:
        k = linkdyn.kinematics(model, times, at_limit="reverse")
    except linkdyn.LinkdynError as exc:     # the message carries the numbers
        return f"kinematics {name:<16} {type(exc).__name__}: {exc}"
    return f"kinematics {name:<16} {digest(k.t, k.q, k.v, k.a)}"


def main() -> int:
    parser = argparse.ArgumentParser(description="fingerprints of linkdyn's results")
    parser.add_argument("--method", choices=("bdf", "rk", "auto"), default=None,
                        help="the integration method (default: simulate's default)")
    args = parser.parse_args()
    method = {} if args.method is None else {"method": args.method}
    lines = [f"spd back-end {linkdyn.assembly.spd_backend()}"]
    for name in linkdyn.builtin_names():
        model = linkdyn.load_model(name)
        lines.append(f"model {name:<21} {digest(model.q0, model.v0)}")
        try:
            lines.append(dynamic(name, model, 1.0 if name.startswith("walker") else 2.0,
                                 dt_out=0.01, **method))
        except linkdyn.ModelError:          # kinematic descriptions have no dynamics
            lines.append(kinematic(name, model, np.linspace(0.0, 2.0, 201)))
        except linkdyn.LinkdynError as exc:
            lines.append(f"simulate {name:<18} {type(exc).__name__}")
        else:                                # a driven model: its kinematic sweep as well
            if name in ("jansen_driven", "jansen_modified", "stephenson2", "crank_rocker"):
                lines.append(kinematic(name, model, np.linspace(0.0, 2.0, 201)))
    extra = {"nfourbar:2": (nfourbar(2), 5.0), "nfourbar:40": (nfourbar(40), 2.0),
             "simple_pendulum": (simple_pendulum(), 5.0), "andrews": (andrews(), 0.03),
             "chain:50": (chain(50), 1.0), "truss:4": (truss(4), 0.5)}
    for name, (model, t_end) in extra.items():
        lines.append(dynamic(name, model, t_end, dt_out=0.01, **method))
    lines.append(dynamic("jansen_benchmark", linkdyn.load_model("jansen"), 10.0, rtol=1e-10,
                         atol=1e-10, dt_out=0.01, **method))
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
