"""The assembly kernels written in plain, vectorised numpy: the baseline the benchmarks
measure the compiled kernels against. Same arrays, same formulas, same outputs."""

import numpy as np


class NumpyKernels:
    def __init__(self, model):
        a = model.kernels.arrays
        self.nbody = model.nbody
        self.unit_row = a["unit_row"]
        self.unit_slot = a["unit_slot"].reshape(-1, 2)
        body = a["rev_body"].reshape(-1, 2)
        local = a["rev_local"].reshape(-1, 4)
        slot = a["rev_slot"].reshape(-1, 12)
        self.rev_row = a["rev_row"]
        self.sides = []
        for s, sign in ((0, 1.0), (1, -1.0)):
            on_body = body[:, s] >= 0
            self.sides.append(dict(
                sign=sign, k=np.flatnonzero(on_body), body=body[on_body, s],
                xi=local[on_body, 2 * s], eta=local[on_body, 2 * s + 1],
                slot=slot[on_body, 6 * s:6 * s + 6],
                k_ground=np.flatnonzero(~on_body),
                gx=local[~on_body, 2 * s], gy=local[~on_body, 2 * s + 1]))

    def assemble(self, q, v, phi, vals, gamma):
        Q = q.reshape(self.nbody, 4)
        V = v.reshape(self.nbody, 4)
        phi[self.unit_row] = Q[:, 2] ** 2 + Q[:, 3] ** 2 - 1.0
        vals[self.unit_slot[:, 0]] = 2.0 * Q[:, 2]
        vals[self.unit_slot[:, 1]] = 2.0 * Q[:, 3]
        gamma[self.unit_row] = -2.0 * (V[:, 2] ** 2 + V[:, 3] ** 2)
        px = np.zeros(len(self.rev_row))
        py = np.zeros(len(self.rev_row))
        for s in self.sides:
            b, xi, eta, sg = s["body"], s["xi"], s["eta"], s["sign"]
            np.add.at(px, s["k"], sg * (Q[b, 0] + xi * Q[b, 2] - eta * Q[b, 3]))
            np.add.at(py, s["k"], sg * (Q[b, 1] + xi * Q[b, 3] + eta * Q[b, 2]))
            np.add.at(px, s["k_ground"], sg * s["gx"])
            np.add.at(py, s["k_ground"], sg * s["gy"])
            sl = s["slot"]
            vals[sl[:, 0]] = sg
            vals[sl[:, 1]] = sg * xi
            vals[sl[:, 2]] = -sg * eta
            vals[sl[:, 3]] = sg
            vals[sl[:, 4]] = sg * eta
            vals[sl[:, 5]] = sg * xi
        phi[self.rev_row] = px
        phi[self.rev_row + 1] = py
        gamma[self.rev_row] = 0.0
        gamma[self.rev_row + 1] = 0.0
