"""Zheng and Wang's method, written independently of linkdyn for the walker benchmark: the walker
in its four generalised coordinates (hip x, y in the floor's frame, leg angles theta1,
theta2 from -y), Lagrange's equations with the mass matrix written out, Hertz contact with
Hunt-Crossley damping at the lowest point of each round foot, Coulomb friction with the
sticking contacts held by acceleration-level constraints (their multipliers are the
friction forces), and an event-driven integration with SciPy's solve_ivp (LSODA): contact
onset and separation, a sliding foot coming to rest, a sticking foot reaching mu0 F_N, the
swing foot passing the stance foot and stopping to move forward relative to it (the
swing-leg rule) stop the integration; the modes
are decided again, with the candidates' stick-slip states found by enumerating the modes
of at most two feet (the paper's situations A to C), and the integration restarts.

Only numpy and scipy; the parameters are read from a linkdyn walker model file's numbers
by the benchmark (``params_of``), nothing else of linkdyn is used.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.integrate import solve_ivp

OPEN, STICK = 0, 2


class Walker:
    def __init__(self, p):
        self.p = p
        self.m, self.J, self.l, self.d, self.r = p["m"], p["J"], p["l"], p["d"], p["r"]
        self.g = np.array([p["g"] * math.sin(p["slope"]), -p["g"] * math.cos(p["slope"])])
        self.K, self.n, self.c = p["K"], p["n"], p["c"]
        self.mu, self.mu0, self.eps = p["mu"], p["mu0"], p["stick_velocity"]
        self.mode = [OPEN, OPEN]        # per foot: OPEN, +1 / -1 sliding, STICK
        self.swinging = [False, False]
        self.events = 0

    # Geometry -----------------------------------------------------------------------------
    def depth(self, z, i):
        return self.r - z[1] + (self.l - self.r) * math.cos(z[2 + i])

    def depth_rate(self, z, i):
        return -z[5] - (self.l - self.r) * math.sin(z[2 + i]) * z[6 + i]

    def lever(self, th):
        return (self.l - self.r) * math.cos(th) + self.r

    def slip(self, z, i):
        return z[4] + z[6 + i] * self.lever(z[2 + i])

    def foot_x(self, z, i):
        return z[0] + (self.l - self.r) * math.sin(z[2 + i])

    def foot_vx(self, z, i):
        return z[4] + (self.l - self.r) * math.cos(z[2 + i]) * z[6 + i]

    def normal(self, z, i):
        if self.swinging[i]:
            return 0.0
        delta = self.depth(z, i)
        if delta <= 0.0:
            return 0.0
        return max(0.0, self.K * delta**self.n * (1.0 + self.c * self.depth_rate(z, i)))

    # Dynamics -----------------------------------------------------------------------------
    def mass(self, z):
        m, d = self.m, self.d
        c1, s1, c2, s2 = math.cos(z[2]), math.sin(z[2]), math.cos(z[3]), math.sin(z[3])
        I = self.J + m * d * d
        return np.array([[2 * m, 0, m * d * c1, m * d * c2],
                         [0, 2 * m, m * d * s1, m * d * s2],
                         [m * d * c1, m * d * s1, I, 0],
                         [m * d * c2, m * d * s2, 0, I]])

    def forces(self, z, sliding_only=True):
        """Gravity, centrifugal terms, normal forces and sliding friction."""
        m, d = self.m, self.d
        Q = np.zeros(4)
        for i in range(2):
            th, w = z[2 + i], z[6 + i]
            Q[0] += m * self.g[0] + m * d * math.sin(th) * w * w
            Q[1] += m * self.g[1] - m * d * math.cos(th) * w * w
            Q[2 + i] += m * d * (math.cos(th) * self.g[0] + math.sin(th) * self.g[1])
            N = self.normal(z, i)
            F = -self.mu * N * self.mode[i] if self.mode[i] in (1, -1) else 0.0
            Q[0] += F
            Q[1] += N
            Q[2 + i] += F * self.lever(th) + N * (self.l - self.r) * math.sin(th)
        return Q

    def slip_row(self, z, i):
        G = np.zeros(4)
        G[0] = 1.0
        G[2 + i] = self.lever(z[2 + i])
        gamma = (self.l - self.r) * math.sin(z[2 + i]) * z[6 + i] ** 2   # a_T = G qdd - gamma
        return G, gamma

    def solve(self, z, sticking):
        """Accelerations and the friction forces of the sticking feet (a_T = 0 there)."""
        M, Q = self.mass(z), self.forces(z)
        if not sticking:
            return np.linalg.solve(M, Q), np.zeros(0)
        rows = [self.slip_row(z, i) for i in sticking]
        G = np.array([r[0] for r in rows])
        gam = np.array([r[1] for r in rows])
        k = len(sticking)
        A = np.block([[M, -G.T], [G, np.zeros((k, k))]])
        sol = np.linalg.solve(A, np.concatenate([Q, gam]))
        return sol[:4], sol[4:]

    def rhs(self, t, z):
        sticking = [i for i in range(2) if self.mode[i] == STICK]
        a, _ = self.solve(z, sticking)
        return np.concatenate([z[4:], a])

    # Modes ---------------------------------------------------------------------------------
    def decide(self, z, breaking=()):
        for i in range(2):
            j = 1 - i
            clear = self.depth(z, i) <= 0.0
            partner_down = self.depth(z, j) > 0.0 and not self.swinging[j]
            ahead = self.foot_x(z, i) > self.foot_x(z, j)
            forward = self.foot_vx(z, i) > self.foot_vx(z, j)
            if not self.swinging[i] and clear and partner_down and not ahead and forward:
                self.swinging[i] = True
            elif self.swinging[i] and ((clear and ahead) or not forward):
                self.swinging[i] = False
        cand = []
        for i in range(2):
            if self.swinging[i] or self.depth(z, i) <= 0.0:
                self.mode[i] = OPEN
            elif abs(self.slip(z, i)) > self.eps:
                self.mode[i] = 1 if self.slip(z, i) > 0 else -1
            else:
                cand.append(i)
        if cand:
            self._decide_candidates(z, cand, breaking)
        if any(self.mode[i] == STICK for i in range(2)):
            z = self._project(z)
        return z

    def _decide_candidates(self, z, cand, breaking):
        """Enumerate stick / slide+ / slide- of the candidates; keep the consistent one."""
        for combo in itertools.product((STICK, 1, -1), repeat=len(cand)):
            for i, md in zip(cand, combo):
                self.mode[i] = md
            sticking = [i for i in range(2) if self.mode[i] == STICK]
            a, F = self.solve(z, sticking)
            ok = True
            for i, md in zip(cand, combo):
                N = self.normal(z, i)
                G, gam = self.slip_row(z, i)
                aT = G @ a - gam
                if md == STICK:
                    bound = (self.mu if i in breaking else self.mu0) * N
                    ok &= abs(F[sticking.index(i)]) < bound
                else:
                    ok &= md * aT > 0
            if ok:
                return
        for i in cand:                    # nothing consistent: slide along the pull
            self.mode[i] = 1 if self.slip(z, i) >= 0 else -1

    def _project(self, z):
        sticking = [i for i in range(2) if self.mode[i] == STICK]
        M = self.mass(z)
        G = np.array([self.slip_row(z, i)[0] for i in sticking])
        Minv_Gt = np.linalg.solve(M, G.T)
        lam = np.linalg.solve(G @ Minv_Gt, G @ z[4:])
        out = z.copy()
        out[4:] -= Minv_Gt @ lam
        return out

    # Events --------------------------------------------------------------------------------
    def event_functions(self):
        fns = []

        def add(fn, direction):
            fn.terminal = True
            fn.direction = direction
            fns.append(fn)

        for i in range(2):
            # Both directions: a swinging foot's circle emerging ahead of the floor matters.
            add(lambda t, z, i=i: self.depth(z, i), 0)
            if self.mode[i] in (1, -1):
                s = self.mode[i]
                add(lambda t, z, i=i, s=s: s * self.slip(z, i), -1)
            if self.mode[i] == STICK:
                def limit(t, z, i=i):
                    sticking = [k for k in range(2) if self.mode[k] == STICK]
                    _, F = self.solve(z, sticking)
                    return self.mu0 * self.normal(z, i) - abs(F[sticking.index(i)])
                add(limit, -1)
        add(lambda t, z: self.foot_x(z, 0) - self.foot_x(z, 1), 0)
        for i in range(2):
            if self.swinging[i]:
                add(lambda t, z, i=i: self.foot_vx(z, i) - self.foot_vx(z, 1 - i), -1)
        return fns

    def simulate(self, z0, t_end, rtol=1e-9, atol=1e-11):
        """Integrate from z0 to t_end; returns (t, z at t_end, touchdown times and feet)."""
        t, z = 0.0, self.decide(np.array(z0, dtype=float))
        touchdowns = []
        while t < t_end:
            fns = self.event_functions()
            sol = solve_ivp(self.rhs, (t, t_end), z, method="LSODA", rtol=rtol, atol=atol,
                            events=fns)
            if sol.status == -1:
                raise RuntimeError(f"walker baseline: {sol.message} at t = {t}")
            t, z = float(sol.t[-1]), sol.y[:, -1].copy()
            if sol.status != 1:
                break
            self.events += 1
            fired = [k for k, te in enumerate(sol.t_events) if len(te)]
            breaking = set()
            for k in fired:
                fn = fns[k]
                if getattr(fn, "__name__", "") == "limit":
                    breaking.add(fn.__defaults__[0])
            # Step just past the located root (solve_ivp may return it from either side),
            # so that the modes are decided on the far side and it does not fire again.
            z = z + 1e-12 * self.rhs(t, z)
            t += 1e-12
            was_open = [self.mode[i] == OPEN and not self.swinging[i] for i in range(2)]
            z = self.decide(z, breaking)
            for i in range(2):
                if was_open[i] and self.mode[i] != OPEN and self.depth(z, i) > 0:
                    touchdowns.append((t, i))
        return t, z, touchdowns


def initial_state(p):
    """The linkdyn walker generator's initial state in the four coordinates."""
    r, l = p["r"], p["l"]
    depth = (2 * p["m"] * p["g"] * math.cos(p["slope"]) / p["K"]) ** (1.0 / p["n"])
    th1, th2, w1, w2 = p["theta1"], p["theta2"], p["omega1"], p["omega2"]
    foot = np.array([0.0, r - depth])
    u1 = np.array([math.sin(th1), -math.cos(th1)])
    hip = foot - (l - r) * u1
    v_foot = np.array([-r * w1, 0.0])
    rel = hip - foot
    v_hip = v_foot + w1 * np.array([-rel[1], rel[0]])
    return np.array([hip[0], hip[1], th1, th2, v_hip[0], v_hip[1], w1, w2])


def params_of(name, gaits, seed):
    """Benchmark parameters from linkdyn's gait table (numbers only)."""
    g = gaits[name]
    return dict(m=seed["m"], J=seed["J"], l=seed["l"], d=seed["d"], r=seed["r"], g=seed["g"],
                n=seed["n"], slope=g["slope"], K=g["stiffness"], c=g["damping"],
                mu=g["friction"], mu0=g["static_friction"], stick_velocity=1e-5,
                theta1=g["theta1"], theta2=g["theta2"], omega1=g["omega1"],
                omega2=g["omega2"])
