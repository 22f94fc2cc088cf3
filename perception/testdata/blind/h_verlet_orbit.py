# label: healthy
# fault: none
# runtime: 8
# what: an eccentric orbit (e = 0.6) integrated with the symplectic leapfrog (velocity Verlet) at 500 steps per orbit over 12 orbits, printing the relative energy error dE/E0: it sits near +1.1e-3 (the usual bounded offset of the leapfrog), dips toward zero near each perihelion and comes back, with no secular drift; the angular momentum error stays below 1e-14.
import time
import numpy as np

GM = 4 * np.pi ** 2
a, e = 1.0, 0.6
r = np.array([a * (1 - e), 0.0])
v = np.array([0.0, np.sqrt(GM * (1 + e) / (a * (1 - e)))])
E0 = 0.5 * v @ v - GM / np.linalg.norm(r)
L0 = r[0] * v[1] - r[1] * v[0]
dt = 1.0 / 500
acc = -GM * r / np.linalg.norm(r) ** 3
print(f"Kepler orbit e = {e}, velocity Verlet, dt = {dt} yr, E0 = {E0:.6f}", flush=True)
for step in range(1, 6001):
    v = v + 0.5 * dt * acc
    r = r + dt * v
    acc = -GM * r / np.linalg.norm(r) ** 3
    v = v + 0.5 * dt * acc
    if step % 50 == 0:
        E = 0.5 * v @ v - GM / np.linalg.norm(r)
        L = r[0] * v[1] - r[1] * v[0]
        print(f"t = {step * dt:6.2f} yr   r = {np.linalg.norm(r):.4f} AU   dE/E0 = {(E - E0) / abs(E0):+.3e}   dL/L0 = {(L - L0) / L0:+.1e}", flush=True)
        time.sleep(0.03)
