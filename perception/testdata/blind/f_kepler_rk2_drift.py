# label: faulty
# fault: drift
# runtime: 14
# what: an eccentric orbit (e = 0.6) integrated with the explicit midpoint rule (RK2) at a fixed 120 steps per orbit, printing t, r and the total energy E every tenth of an orbit: RK2 is not symplectic and loses accuracy at each perihelion passage, so E climbs in steps, about +1.3% of |E0| per orbit (+3% at the first perihelion, +5% by orbit 4, +19% by orbit 16) while r stays between 0.4 and 2 AU; the onset is the first print where the drift exceeds anything seen in the first orbit (the secular part shows).
import time
import numpy as np

GM = 4 * np.pi ** 2          # AU^3 / yr^2
a, ecc = 1.0, 0.6
r = np.array([a * (1 + ecc), 0.0])
v = np.array([0.0, np.sqrt(GM * (1 - ecc) / (a * (1 + ecc)))])


def acc(r):
    return -GM * r / np.linalg.norm(r) ** 3


E0 = 0.5 * v @ v - GM / np.linalg.norm(r)
dt = 1.0 / 120
print(f"orbit e = {ecc}, RK2 midpoint, dt = {dt:.5f} yr, E0 = {E0:.6f}", flush=True)
first_orbit_max, onset = 0.0, False
for step in range(1, 120 * 16 + 1):
    rm, vm = r + 0.5 * dt * v, v + 0.5 * dt * acc(r)
    r, v = r + dt * vm, v + dt * acc(rm)
    if step % 12 == 0:
        t = step * dt
        E = 0.5 * v @ v - GM / np.linalg.norm(r)
        print(f"t = {t:6.2f} yr   r = {np.linalg.norm(r):.3f} AU   E = {E:.6f}", flush=True)
        drift = abs(E - E0) / abs(E0)
        if t <= 1.0:
            first_orbit_max = max(first_orbit_max, drift)
        elif not onset and drift > first_orbit_max:
            labmate.log("onset", 1)
            onset = True
        time.sleep(0.08)
