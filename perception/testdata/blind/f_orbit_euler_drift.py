# label: faulty
# fault: drift
# runtime: 13
# what: a comet-like orbit (eccentricity 0.3) integrated with explicit Euler at 400 steps per orbit, printing the relative energy error dE/E0 every 40 steps: Euler is not symplectic, the orbit spirals outwards and dE/E0 drifts steadily upward, +18% after the first orbit and about +57% after ten; nothing else looks dramatic (r stays within 1-3 AU).
import time
import numpy as np

GM = 4 * np.pi ** 2      # AU^3 / yr^2
a, e = 1.0, 0.3
r = np.array([a * (1 + e), 0.0])
v = np.array([0.0, np.sqrt(GM * (1 - e) / (a * (1 + e)))])
E0 = 0.5 * v @ v - GM / np.linalg.norm(r)
dt = 1.0 / 400
print(f"Kepler orbit, explicit Euler, dt = {dt} yr, E0 = {E0:.6f}", flush=True)
labmate.log("onset", 1)
t = 0.0
for step in range(1, 4001):
    acc = -GM * r / np.linalg.norm(r) ** 3
    r, v = r + dt * v, v + dt * acc
    t += dt
    if step % 40 == 0:
        E = 0.5 * v @ v - GM / np.linalg.norm(r)
        print(f"t = {t:6.2f} yr   r = {np.linalg.norm(r):.4f} AU   dE/E0 = {(E - E0) / abs(E0):+.4e}", flush=True)
        time.sleep(0.1)
