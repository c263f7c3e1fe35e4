"""The baseline a Python user would write today: the index-1 form of the same model,

    q' = v,   [M  Phi_q^T] [v'  ]   [Q    ]
              [Phi_q   0 ] [lam ] = [gamma],

integrated by scipy.integrate.solve_ivp. Uses linkdyn's kernels for Phi_q, Q and gamma, so the
comparison is of integrators, not of model code."""

import numpy as np
import scipy.sparse as sp
from scipy.integrate import solve_ivp
from scipy.sparse.linalg import splu

import linkdyn


def index1_rhs(model):
    nq, nc = model.nq, model.nc
    kkt = np.zeros((nq + nc, nq + nc))
    kkt[np.arange(nq), np.arange(nq)] = model.mass
    rhs = np.empty(nq + nc)

    def f(t, y):
        q, v = y[:nq], y[nq:]
        J = model.phi_q(q, t).toarray()
        kkt[:nq, nq:] = J.T
        kkt[nq:, :nq] = J
        rhs[:nq] = model.force(q, v, t)
        rhs[nq:] = model.gamma(q, v, t)
        return np.concatenate([v, np.linalg.solve(kkt, rhs)[:nq]])

    return f


def index1_rhs_sparse(model):
    """The same with a sparse KKT matrix and SuperLU: the fair baseline for large models."""
    nq = model.nq
    M = sp.diags(model.mass)

    def f(t, y):
        q, v = y[:nq], y[nq:]
        J = model.phi_q(q, t)
        kkt = sp.bmat([[M, J.T], [J, None]], format="csc")
        rhs = np.concatenate([model.force(q, v, t), model.gamma(q, v, t)])
        return np.concatenate([v, splu(kkt).solve(rhs)[:nq]])

    return f


def run(model, t_end, rtol, atol, method="LSODA", t_eval=None, sparse=False):
    s = linkdyn.consistent_state(model)
    rhs = index1_rhs_sparse(model) if sparse else index1_rhs(model)
    sol = solve_ivp(rhs, (0.0, t_end), np.concatenate([s.q, s.v]),
                    method=method, rtol=rtol, atol=atol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol
