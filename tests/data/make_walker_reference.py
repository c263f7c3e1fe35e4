"""Make the walker reference: each built-in gait integrated for 10 s by the paper's own method,
written independently of linkdyn in benchmarks/walker_baseline.py (four generalised
coordinates, Lagrange's equations, SciPy's LSODA with solve_ivp events, stick-slip decided
by enumerating the feet's modes). Only the gaits' numbers come from linkdyn
(linkdyn.models.walker.GAITS and PAPER).

Output: walker_reference.json: per gait, at t = 2 s and t = 10 s, the hip (x, y), the leg
angles theta1, theta2 (counterclockwise from -y) and the number of touchdowns so far.
Run: python tests/data/make_walker_reference.py   (about 20 s)
"""

import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent.parent / "benchmarks"))

from walker_baseline import Walker, initial_state, params_of  # noqa: E402

from linkdyn.models.walker import GAITS, PAPER  # noqa: E402


def main():
    out = {}
    for name in sorted(GAITS):
        p = params_of(name, GAITS, PAPER)
        out[name] = {}
        for t_end in (2.0, 10.0):
            w = Walker(p)
            t, z, touchdowns = w.simulate(initial_state(p), t_end)
            out[name][f"{t_end:g}"] = row = dict(t=t, hip=[float(z[0]), float(z[1])],
                                                 theta=[float(z[2]), float(z[3])],
                                                 touchdowns=len(touchdowns), events=w.events)
            check(name, t_end, row, p)
            print(name, t_end, row)
        # Downhill: the walker is further on, and has touched down more often, at 10 s.
        early, late = out[name]["2"], out[name]["10"]
        assert late["hip"][0] > early["hip"][0] > 0.0, (name, early, late)
        assert late["touchdowns"] >= early["touchdowns"] > 0, (name, early, late)
    (HERE / "walker_reference.json").write_text(json.dumps(out, indent=1) + "\n")


def check(name, t_end, row, p):
    """What any valid run must satisfy before it becomes a reference: it reached t_end, its
    state is finite, the hip is above the floor by at most a leg (a foot sinks only by the
    contact's small penetration), and the legs hang within a quarter turn of -y."""
    assert row["t"] == t_end, (name, t_end, row["t"])
    values = row["hip"] + row["theta"]
    assert all(math.isfinite(x) for x in values), (name, t_end, row)
    assert 0.0 < row["hip"][1] <= p["l"] + 1e-3, (name, t_end, row["hip"])
    assert all(abs(th) < math.pi / 2 for th in row["theta"]), (name, t_end, row["theta"])


if __name__ == "__main__":
    main()
