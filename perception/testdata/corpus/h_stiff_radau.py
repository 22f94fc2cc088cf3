# label: healthy
# fault: none
# watch: finite(x)
# watch: x in [-2.5, 2.5]
# runtime: 3
# what: stiff van der Pol oscillator (mu = 1000) solved with solve_ivp method='Radau' in windows over t in [0, 3000]; relaxation oscillation with bounded |x| <= 2.
import time
import numpy as np
from scipy.integrate import solve_ivp

mu = 1000.0


def rhs(t, z):
    return [z[1], mu * (1 - z[0] ** 2) * z[1] - z[0]]


def jac(t, z):
    return [[0.0, 1.0], [-2 * mu * z[0] * z[1] - 1.0, mu * (1 - z[0] ** 2)]]


z = np.array([2.0, 0.0])
t = 0.0
nsteps = 0
for k in range(100):
    sol = solve_ivp(rhs, (t, t + 30.0), z, method="Radau", jac=jac, rtol=1e-6, atol=1e-8)
    z = sol.y[:, -1]
    t = sol.t[-1]
    nsteps += len(sol.t) - 1
    labmate.log("x", z[0], t=t)
    print(f"t={t:.0f} x={z[0]:+.5f} steps={nsteps}")
    time.sleep(0.02)
print(f"done: {nsteps} implicit steps for t in [0, {t:.0f}]")
