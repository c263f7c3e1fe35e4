"""Make the walker reference: each built-in gait integrated for 10 s by the seed's own method,
written independently of linkdyn in benchmarks/walker_baseline.py (four generalised
coordinates, Lagrange's equations, SciPy's LSODA with solve_ivp events, stick-slip decided
by enumerating the feet's modes). Only the gaits' numbers come from linkdyn
(linkdyn.models.walker.GAITS and SEED).

Output: walker_reference.json: per gait, at t = 2 s and t = 10 s, the hip (x, y), the leg
angles theta1, theta2 (counterclockwise from -y) and the number of touchdowns so far.
Run: python tests/data/make_walker_reference.py   (about 20 s)
"""

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent / "benchmarks"))

from walker_baseline import Walker, initial_state, params_of  # noqa: E402

from linkdyn.models.walker import GAITS, SEED  # noqa: E402


def main():
    out = {}
    for name in sorted(GAITS):
        p = params_of(name, GAITS, SEED)
        out[name] = {}
        for t_end in (2.0, 10.0):
            w = Walker(p)
            t, z, touchdowns = w.simulate(initial_state(p), t_end)
            out[name][f"{t_end:g}"] = dict(t=t, hip=[float(z[0]), float(z[1])],
                                           theta=[float(z[2]), float(z[3])],
                                           touchdowns=len(touchdowns), events=w.events)
            print(name, t_end, out[name][f"{t_end:g}"])
    (HERE / "walker_reference.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
