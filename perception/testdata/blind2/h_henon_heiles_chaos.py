# label: healthy
# fault: none
# runtime: 14
# what: Henon-Heiles star at E = 0.15 (bounded, chaotic) integrated with leapfrog (symplectic), fixed-width table t x y px py H dH/H0 sep: the orbit wanders chaotically, H stays at 0.15000 with dH/H0 between 1e-6 and 3e-5 (bounded, no drift), and the separation of a twin orbit started 1e-9 away grows exponentially, 1e-9 -> 3e-3 over the run, as a chaotic orbit's must (a finite-time Lyapunov exponent).
import time

import numpy as np

# Henon-Heiles star in a galactic potential at E = 0.15 (below the escape energy 1/6: bounded but
# chaotic), leapfrog (symplectic) with dt = 0.01; a twin orbit started 1e-9 away measures the
# exponential separation of nearby orbits (a finite-time Lyapunov exponent)


def accel(q):
    x, y = q
    return np.array([-x - 2 * x * y, -y - x * x + y * y])


def H(q, p):
    x, y = q
    return 0.5 * (p @ p) + 0.5 * (x * x + y * y) + x * x * y - y**3 / 3


q = np.array([0.0, -0.1])
E = 0.15
py = np.sqrt(2 * (E - (0.5 * 0.01 + 0.001 / 3)))
p = np.array([0.0, py])
p[0] = 0.1 * py
p[1] = np.sqrt(2 * E - 2 * (0.5 * 0.01 + 0.001 / 3) - p[0] ** 2)
q2, p2 = q + np.array([1e-9, 0.0]), p.copy()
H0 = H(q, p)
dt = 0.01
print("         t           x           y          px          py             H     dH/H0        sep")
a, a2 = accel(q), accel(q2)
for i in range(1, 150 * 100 + 1):
    p += 0.5 * dt * a
    q += dt * p
    a = accel(q)
    p += 0.5 * dt * a
    p2 += 0.5 * dt * a2
    q2 += dt * p2
    a2 = accel(q2)
    p2 += 0.5 * dt * a2
    if i % 100 == 0:
        Hn = H(q, p)
        sep = np.sqrt(np.sum((q - q2) ** 2) + np.sum((p - p2) ** 2))
        print(f"{i * dt:10.2f} {q[0]:11.6f} {q[1]:11.6f} {p[0]:11.6f} {p[1]:11.6f} {Hn:13.9f} {(Hn - H0) / H0:9.2e} {sep:10.3e}",
              flush=True)
        time.sleep(0.07)
