# label: healthy
# fault: none
# runtime: 8
# what: two identical pendula (small angles) coupled by a weak spring, integrated with velocity Verlet: the energy beats back and forth, E1 falls from 0.5 to ~0 while E2 rises to ~0.5 and then back, three times, while E_tot stays at 0.5 to within 1e-4 (a conserved total with large swings in its parts).
import time
import numpy as np

w0, k = 2 * np.pi, 2.0
x = np.array([0.1, 0.0])
v = np.zeros(2)
dt = 0.004


def acc(x):
    return np.array([-w0 ** 2 * x[0] - k * (x[0] - x[1]), -w0 ** 2 * x[1] - k * (x[1] - x[0])])


def energies(x, v):
    e1 = 0.5 * v[0] ** 2 + 0.5 * w0 ** 2 * x[0] ** 2
    e2 = 0.5 * v[1] ** 2 + 0.5 * w0 ** 2 * x[1] ** 2
    ec = 0.5 * k * (x[0] - x[1]) ** 2
    return e1, e2, e1 + e2 + ec


e1, e2, E0 = energies(x, v)
a = acc(x)
print(f"coupled pendula, velocity Verlet, dt = {dt}", flush=True)
for n in range(1, 15001):
    v += 0.5 * dt * a
    x += dt * v
    a = acc(x)
    v += 0.5 * dt * a
    if n % 250 == 0:
        e1, e2, et = energies(x, v)
        print(f"t = {n * dt:6.2f}   E1 = {e1 / E0:.4f}   E2 = {e2 / E0:.4f}   E_tot = {et / E0:.6f}", flush=True)
        time.sleep(0.05)
