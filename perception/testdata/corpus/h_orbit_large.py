# label: healthy
# fault: none
# watch: finite(energy_J)
# watch: radius_m in [1.4e11, 1.6e11]
# runtime: 4
# what: Earth around the Sun (M = 1.989e30 kg) with a leapfrog integrator in SI units: total energy ~ -2.6e33 J and radius ~1.5e11 m are huge but constant (bounded periodic orbit over 3 years).
import time
import numpy as np

G, M, m = 6.674e-11, 1.989e30, 5.972e24
r = np.array([1.496e11, 0.0])
v = np.array([0.0, 29_780.0])
dt = 3600.0  # one hour
a = -G * M * r / np.linalg.norm(r) ** 3
steps_per_report = 120  # five days
for k in range(1, 3 * 365 * 24 + 1):
    v += 0.5 * dt * a
    r += dt * v
    a = -G * M * r / np.linalg.norm(r) ** 3
    v += 0.5 * dt * a
    if k % steps_per_report == 0:
        R = np.linalg.norm(r)
        E = 0.5 * m * v @ v - G * M * m / R
        day = k * dt / 86400
        labmate.log("energy_J", E, t=day)
        labmate.log("radius_m", R, t=day)
        labmate.log("sun_mass_kg", M, t=day)
        print(f"day={day:.0f} radius_m={R:.6e} energy_J={E:.8e}")
        time.sleep(0.015)
print("three orbits completed")
