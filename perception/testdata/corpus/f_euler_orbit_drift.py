# label: faulty
# fault: drift
# runtime: 16
# what: a planet on an eccentric Kepler orbit (e = 0.5, GM = 1) integrated with explicit (forward) Euler at dt = 0.01, printing the relative energy error dE/E0 every 10 steps: forward Euler is not symplectic and pumps energy into the orbit at every perihelion passage, so dE/E0 climbs in steps, one per orbit, to about +0.6 (the orbit loosens) while nothing overflows.
import time
import numpy as np

r = np.array([0.5, 0.0])
v = np.array([0.0, np.sqrt(3.0)])  # perihelion of a = 1, e = 0.5
E0 = 0.5 * v @ v - 1.0 / np.linalg.norm(r)
dt = 1e-2
labmate.log("onset", 1)
for step in range(1, 5001):
    a = -r / np.linalg.norm(r) ** 3
    r, v = r + dt * v, v + dt * a
    if step % 10 == 0:
        E = 0.5 * v @ v - 1.0 / np.linalg.norm(r)
        print(f"t={step * dt:.3f} r={np.linalg.norm(r):.5f} E={E:.6f} dE/E0={(E - E0) / abs(E0):+.5e}", flush=True)
        time.sleep(0.03)
print("done")
