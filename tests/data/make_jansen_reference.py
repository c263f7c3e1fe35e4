"""Make the Jansen reference trajectory by a method independent of linkdyn's integrator.

The mechanism has one degree of freedom: the crank angle theta (bar L1 turns about P1). For a
given theta the other 40 coordinates z follow from the constraints by Newton's method; the
velocity map q_theta solves Phi_z z_theta = -Phi_c c_theta and the Lagrange equation of the
one coordinate is

    m(theta) theta'' = q_theta^T Q - (q_theta^T M q_thetatheta) theta'^2,
    m(theta) = q_theta^T M q_theta,   Phi_q q_thetatheta = gamma(q, q_theta).

It is integrated with SciPy's DOP853 at rtol = atol = 1e-13 and, as a second method, with
Radau at 1e-12; the script prints their largest difference. Only linkdyn's model file and its
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
model = linkdyn.load_model("jansen")
HALF = 0.075  # half the crank length
crank = np.arange(4)
dep = np.arange(4, model.nq)
# Rows that involve dependent coordinates (the crank's unit and pivot rows hold by
# construction of c(theta)).
rows = np.array([i for i, n in enumerate(model.constraint_names)
                 if n not in ("L1.unit", "J1.x", "J1.y")])
state = {"q": linkdyn.consistent_state(model).q.copy()}


def crank_coords(theta):
    c, s = np.cos(theta), np.sin(theta)
    return (np.array([HALF * c, HALF * s, c, s]), np.array([-HALF * s, HALF * c, -s, c]),
            np.array([-HALF * c, -HALF * s, -c, -s]))


def positions(theta):
    q = state["q"].copy()
    q[crank], _, _ = crank_coords(theta)
    for _ in range(50):
        r = model.phi(q)[rows]
        if np.max(np.abs(r)) < 1e-15:
            break
        J = model.phi_q(q).toarray()[np.ix_(rows, dep)]
        q[dep] -= np.linalg.solve(J, r)
    else:
        raise RuntimeError(f"no closure at theta = {theta}")
    state["q"] = q
    return q


def rhs(t, y):
    theta, omega = y
    q = positions(theta)
    _, cth, _ = crank_coords(theta)
    J = model.phi_q(q).toarray()
    Jz = J[np.ix_(rows, dep)]
    q_th = np.zeros(model.nq)
    q_th[crank] = cth
    q_th[dep] = np.linalg.solve(Jz, -J[np.ix_(rows, crank)] @ cth)
    # Phi_q q_thth = gamma(q, q_th); the crank part of q_thth is known analytically.
    _, _, c2 = crank_coords(theta)
    q_thth = np.zeros(model.nq)
    q_thth[crank] = c2
    g = model.gamma(q, q_th)[rows] - J[np.ix_(rows, crank)] @ c2
    q_thth[dep] = np.linalg.solve(Jz, g)
    m = q_th @ (model.mass * q_th)
    acc = (q_th @ model.force(q, q_th * omega) - (q_th @ (model.mass * q_thth)) * omega**2) / m
    return [omega, acc]


def observe(sol_y):
    out = []
    for theta, omega in sol_y.T:
        q = positions(theta)
        _, cth, _ = crank_coords(theta)
        J = model.phi_q(q).toarray()
        q_th = np.zeros(model.nq)
        q_th[crank] = cth
        q_th[dep] = np.linalg.solve(J[np.ix_(rows, dep)], -J[np.ix_(rows, crank)] @ cth)
        v = q_th * omega
        p = model.marker_positions(q)
        out.append([*p[0], *p[1], sum(model.energy(q, v))])
    return np.array(out)


def main():
    t_eval = np.round(np.linspace(0.0, 10.0, 1001), 12)
    y0 = [0.0, -2 * np.pi]
    runs = {}
    for method, tol in (("DOP853", 1e-13), ("Radau", 1e-12)):
        state["q"] = linkdyn.consistent_state(model).q.copy()
        t0 = time.perf_counter()
        sol = solve_ivp(rhs, (0.0, 10.0), y0, method=method, rtol=tol, atol=tol, t_eval=t_eval,
                        dense_output=False)
        assert sol.success, sol.message
        state["q"] = linkdyn.consistent_state(model).q.copy()
        runs[method] = observe(sol.y)
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
