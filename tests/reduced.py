"""Independent solutions of one-degree-of-freedom mechanisms in one coordinate.

The crank (a body pinned to the ground) turns by the angle theta; every other coordinate
follows from the constraints by Newton's method. With q_theta = dq/dtheta (from
Phi_q q_theta = 0) and q_thth (from Phi_q q_thth = gamma(q, q_theta)), the Lagrange equation
of the single coordinate is

    m(theta) theta'' = q_theta^T Q - (q_theta^T M q_thth) theta'^2,   m = q_theta^T M q_theta.

It uses only the model's Phi, Phi_q, gamma and Q (checked against finite differences in
test_kernels.py), not linkdyn's integrator or projections.
"""

import numpy as np


class ReducedCrank:
    def __init__(self, model, crank, pivot_local, pivot_global, q_guess):
        self.model = model
        i = model.body_names.index(crank)
        self.crank = np.arange(4 * i, 4 * i + 4)
        self.dep = np.setdiff1d(np.arange(model.nq), self.crank)
        self.xi, self.eta = pivot_local
        self.P = np.asarray(pivot_global, dtype=float)
        # Rows touching dependent coordinates (the others hold by construction of c(theta)).
        J = model.phi_q(model.q0).tocsr()
        self.rows = np.array([r for r in range(model.nc)
                              if np.any(np.isin(J.indices[J.indptr[r]:J.indptr[r + 1]],
                                                self.dep))])
        self.q = np.array(q_guess, dtype=float)

    def crank_coords(self, theta):
        """c(theta), dc/dtheta, d2c/dtheta2 for the crank's (x, y, ux, uy)."""
        u = np.array([np.cos(theta), np.sin(theta)])
        pu = np.array([-u[1], u[0]])
        c = np.concatenate([self.P - self.xi * u - self.eta * pu, u])
        c1 = np.concatenate([-self.xi * pu + self.eta * u, pu])
        c2 = np.concatenate([self.xi * u + self.eta * pu, -u])
        return c, c1, c2

    def positions(self, theta):
        q = self.q.copy()
        q[self.crank], _, _ = self.crank_coords(theta)
        rows, dep = self.rows, self.dep
        for _ in range(50):
            r = self.model.phi(q)[rows]
            if np.max(np.abs(r)) < 1e-15:
                break
            J = self.model.phi_q(q).toarray()[np.ix_(rows, dep)]
            q[dep] -= np.linalg.solve(J, r)
        else:
            raise RuntimeError(f"no closure at theta = {theta}")
        self.q = q
        return q

    def velocity_map(self, theta):
        """q(theta), q_theta, q_thth."""
        m, rows, dep, crank = self.model, self.rows, self.dep, self.crank
        q = self.positions(theta)
        _, c1, c2 = self.crank_coords(theta)
        J = m.phi_q(q).toarray()
        Jz, Jc = J[np.ix_(rows, dep)], J[np.ix_(rows, crank)]
        q1 = np.zeros(m.nq)
        q1[crank] = c1
        q1[dep] = np.linalg.solve(Jz, -Jc @ c1)
        q2 = np.zeros(m.nq)
        q2[crank] = c2
        q2[dep] = np.linalg.solve(Jz, m.gamma(q, q1)[rows] - Jc @ c2)
        return q, q1, q2

    def rhs(self, t, y):
        theta, omega = y
        q, q1, q2 = self.velocity_map(theta)
        M = self.model.mass
        acc = (q1 @ self.model.force(q, q1 * omega, t) - (q1 @ (M * q2)) * omega**2) / (q1 @ (M * q1))
        return [omega, acc]

    def state(self, theta, omega):
        q, q1, _ = self.velocity_map(theta)
        return q, q1 * omega
