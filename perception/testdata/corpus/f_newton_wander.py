# label: faulty
# fault: solver
# runtime: 18
# what: Newton's method for the intersection of the circle-like surface x^2 + y^2 + 1 = 0 with the line x = y, a system with no real root (a sign slip in the model: + 1 for - 1): the Jacobian stays regular, so every step is taken, and the residual norm ||F|| wanders chaotically between 1 and a few hundred for all 200 iterations without ever converging.
import time
import numpy as np

z = np.array([3.0, 2.9])
labmate.log("onset", 1)
for k in range(200):
    x, y = z
    F = np.array([x * x + y * y + 1.0, x - y])
    J = np.array([[2 * x, 2 * y], [1.0, -1.0]])
    dz = np.linalg.solve(J, -F)
    print(f"iter {k:3d}: ||F|| = {np.linalg.norm(F):.6e}, |dx| = {np.linalg.norm(dz):.3e}", flush=True)
    if np.linalg.norm(F) < 1e-10:
        break
    z = z + dz
    time.sleep(0.08)
print(f"stopped after {k + 1} iterations at x = {z}")
