"""Make the Jansen reference trajectory by a method independent of linkdyn's integrator.

The mechanism has one degree of freedom: the crank angle theta (bar L1 turns about P1). For a
given theta the other 40 coordinates z follow from the constraints by Newton's method; the
velocity map q_theta solves Phi_z z_theta = -Phi_c c_theta and the Lagrange equation of the
one coordinate is

    m(theta) theta'' = q_theta^T Q - (q_theta^T M q_thetatheta) theta'^2,
    m(theta) = q_theta^T M q_theta,   Phi_q q_thetatheta = gamma(q, q_theta)

(the machinery is ReducedCrank in tests/conftest.py). It is integrated with SciPy's DOP853 at
rtol = atol = 1e-13 and, as a second method, with Radau at 1e-12; the script prints their
largest difference. Only linkdyn's model file and its
Phi / Phi_q / gamma evaluations are used (checked against finite differences in the tests).

Output: jansen_reference.txt, columns t P3.x P3.y foot.x foot.y energy, t = 0, 0.01, ..., 10.
Run: python tests/data/make_jansen_reference.py   (a few minutes)
"""

import sys
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

import linkdyn

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from conftest import ReducedCrank  # noqa: E402

model = linkdyn.load_model("jansen")


def fresh():
    # Bar L1 turns about its end a, pinned at P1 = (0, 0).
    return ReducedCrank(model, "L1", (-0.075, 0.0), (0.0, 0.0),
                        linkdyn.consistent_state(model).q)


def observe(reduced, sol_y):
    out = []
    for theta, omega in sol_y.T:
        q, v = reduced.state(theta, omega)
        p = model.marker_positions(q)
        out.append([*p[0], *p[1], sum(model.energy(q, v))])
    return np.array(out)


def main():
    t_eval = np.round(np.linspace(0.0, 10.0, 1001), 12)
    y0 = [0.0, -2 * np.pi]
    runs = {}
    for method, tol in (("DOP853", 1e-13), ("Radau", 1e-12)):
        reduced = fresh()
        t0 = time.perf_counter()
        sol = solve_ivp(reduced.rhs, (0.0, 10.0), y0, method=method, rtol=tol, atol=tol,
                        t_eval=t_eval)
        assert sol.success, sol.message
        runs[method] = observe(fresh(), sol.y)
        print(f"{method} at {tol:g}: {sol.nfev} evaluations, {time.perf_counter() - t0:.1f} s",
              file=sys.stderr)
    diff = np.max(np.abs(runs["DOP853"][:, :4] - runs["Radau"][:, :4]))
    drift = np.ptp(runs["DOP853"][:, 4])
    print(f"largest marker difference DOP853 vs Radau: {diff:.2e} m; energy variation of the "
          f"reference: {drift:.2e} J", file=sys.stderr)
    header = (f"Jansen reference: crank-angle ODE, DOP853 rtol=atol=1e-13 (made by "
              f"make_jansen_reference.py); |DOP853 - Radau(1e-12)| <= {diff:.1e} m\n"
              "t P3.x P3.y foot.x foot.y energy")
    np.savetxt(HERE / "jansen_reference.txt", np.column_stack([t_eval, runs["DOP853"]]),
               header=header, fmt="%.16e")


if __name__ == "__main__":
    main()
