# label: healthy
# fault: none
# watch: energy decreasing
# watch: finite(theta)
# runtime: 3
# what: damped nonlinear pendulum (g/L = 9.81, damping 0.3) integrated with solve_ivp (RK45) in 0.05 s windows; the swing decays and the energy falls monotonically.
import time
import numpy as np
from scipy.integrate import solve_ivp

g_over_l, c = 9.81, 0.3


def rhs(t, s):
    return [s[1], -g_over_l * np.sin(s[0]) - c * s[1]]


def energy(s):
    return 0.5 * s[1] ** 2 + g_over_l * (1 - np.cos(s[0]))


s = np.array([2.0, 0.0])  # large initial angle: nonlinear regime
t = 0.0
for k in range(200):
    sol = solve_ivp(rhs, (t, t + 0.05), s, rtol=1e-9, atol=1e-11)
    s = sol.y[:, -1]
    t = sol.t[-1]
    E = energy(s)
    labmate.log("theta", s[0], t=t)
    labmate.log("energy", E, t=t)
    print(f"t={t:.2f} theta={s[0]:+.6f} omega={s[1]:+.6f}")
    time.sleep(0.015)
print(f"final energy {E:.4e} (initial {energy(np.array([2.0, 0.0])):.4f})")
