"""
The IFToMM benchmark problems A01, A02 and A03
==============================================

Three problems of the IFToMM library of computational benchmark problems for multibody
dynamics, each checked against an independent solution:

* A01, a simple pendulum with a lumped mass: the exact large-amplitude motion;
* A02, N four-bar mechanisms side by side, which pass through singular configurations (all
  bars on the ground line) twice a period: every window stays a parallelogram, so point B0
  follows the exact one-angle motion;
* A03, Andrews' squeezing mechanism: the reference angles of the Test Set for IVP Solvers
  (Mazzia and Magherini) at 0.03 s.
"""

import matplotlib.pyplot as plt
import numpy as np

import linkdyn
from linkdyn.models import iftomm

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
for tol in (1e-6, 1e-8, 1e-10):
    a01 = linkdyn.simulate(iftomm.simple_pendulum(), 10.0, rtol=tol, atol=tol, dt_out=0.01)
    e01 = np.linalg.norm(a01.marker("P1") - iftomm.pendulum_exact(a01.t), axis=1)
    a02 = linkdyn.simulate(iftomm.nfourbar(2), 20.0, rtol=tol, atol=tol, dt_out=0.05)
    e02 = np.linalg.norm(a02.marker("B0") - iftomm.nfourbar_exact(2, a02.t), axis=1)
    print(f"rtol {tol:g}: A01 P1 within {e01.max():.1e} m, A02 B0 within {e02.max():.1e} m")
    axes[0].semilogy(a01.t[1:], e01[1:], label=f"rtol {tol:g}")
    axes[1].semilogy(a02.t[1:], e02[1:], label=f"rtol {tol:g}")
axes[0].set_title("A01: error of P1 (m)")
axes[1].set_title("A02 (N = 2): error of B0 (m)")
for ax in axes:
    ax.set_xlabel("t (s)")
    ax.legend(fontsize="small")
fig.tight_layout()

# %%
# A02's singular configurations: the reciprocal condition of the driven model's Jacobian
# along one turn drops where all the bars lie on the ground line.

driven = iftomm.nfourbar(2, driven=True)
kin = linkdyn.kinematics(driven, np.linspace(0.0, 2 * np.pi, 2001), on_singular="continue")
print(f"A02 driven: {len(kin.singularities)} singular configurations recorded")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.semilogy(kin.t, kin.rcond)
ax.set_xlabel("t (s)")
ax.set_ylabel("reciprocal condition of Phi_q")

# %%
# A03, Andrews' squeezing mechanism: seven bodies, a stiff spring and a motor torque.

a03 = linkdyn.simulate(iftomm.andrews(), iftomm.ANDREWS_T_END, rtol=1e-10, atol=1e-10)
angles = iftomm.andrews_angles(a03)
error = np.abs(angles[-1] - np.array(iftomm.ANDREWS_REFERENCE)).max()
print(f"A03 at 0.03 s: largest angle error {error:.1e} rad against the test set's reference")
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(a03.t, angles)
ax.set_xlabel("t (s)")
ax.set_ylabel("angles (rad)")
ax.legend(["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"], fontsize="small")
