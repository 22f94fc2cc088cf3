# label: healthy
# fault: none
# runtime: 9
# what: a stationary iteration x <- M x + c whose iteration matrix M = [[0.95, 50], [0, 0.95]] is stable (spectral radius 0.95) but strongly non-normal: the printed error err = |x - x*| grows from its start of 1e-3 to 0.38 over the first 18 iterations, then turns over and converges geometrically to 1e-9 by iteration 420, while the residual res falls — transient growth of a stable system, not divergence.
import time
import numpy as np

M = np.array([[0.95, 50.0], [0.0, 0.95]])
c = np.array([1.0, 0.1])
xstar = np.linalg.solve(np.eye(2) - M, c)
x = xstar + np.array([0.0, 1e-3])
for k in range(420):
    x_new = M @ x + c
    res = np.linalg.norm(x_new - x)
    x = x_new
    err = np.linalg.norm(x - xstar)
    print(f"iter {k:3d}  err = {err:.6e}  res = {res:.6e}", flush=True)
    time.sleep(0.02)
print("converged to", x, "exact", xstar)
