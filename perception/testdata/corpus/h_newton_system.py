# label: healthy
# fault: none
# watch: finite(step)
# runtime: 3
# what: Newton's method for the intersection of a circle and a cubic from three starting points; each converges quadratically, then a few extra polishing steps reprint the same converged root.
import time
import numpy as np


def F(z):
    x, y = z
    return np.array([x ** 2 + y ** 2 - 4.0, y - x ** 3 + x])


def J(z):
    x, y = z
    return np.array([[2 * x, 2 * y], [1 - 3 * x ** 2, 1.0]])


for start in ([1.5, 1.0], [-1.5, -1.0], [0.5, 1.8]):
    z = np.array(start)
    print(f"start {z}")
    for it in range(1, 50):
        dz = np.linalg.solve(J(z), -F(z))
        z = z + dz
        step = float(np.linalg.norm(dz))
        labmate.log("step", step)
        print(f"  iter {it}  x = {z[0]:.15f}  y = {z[1]:.15f}  |F| = {np.linalg.norm(F(z)):.2e}")
        time.sleep(0.08)
        if step < 1e-14:
            break
    for k in range(3):
        z = z + np.linalg.solve(J(z), -F(z))
        print(f"  polished root x = {z[0]:.15f}  y = {z[1]:.15f}")
        time.sleep(0.08)
print("all roots found")
