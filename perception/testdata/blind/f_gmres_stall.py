# label: faulty
# fault: stagnation
# runtime: 13
# what: implicit time step of periodic 1-D advection (upwind, Courant number 1.1, almost no diffusion) solved with restarted GMRES(4): the operator's eigenvalues circle the origin, so restarted GMRES stagnates: |r| drops to 1.5e-2 within a few cycles and then sits there, unchanged to four digits, for 75 cycles while the solver keeps iterating toward rtol 1e-10.
import time
import numpy as np
from scipy.sparse import diags
from scipy.sparse.linalg import gmres

n = 400
C = 1.1
A = diags([np.ones(n), -C * np.ones(n - 1), [-C]], [0, -1, n - 1], format="csr") + 1e-4 * diags([np.ones(n)], [0])
x = np.linspace(0, 1, n, endpoint=False)
b = np.exp(-200 * (x - 0.3) ** 2)
nb = np.linalg.norm(b)

print(f"implicit upwind advection step, n = {n}, Courant = {C}, GMRES(4), rtol = 1e-10", flush=True)
u = np.zeros(n)
labmate.log("onset", 1)
for cycle in range(1, 81):
    u, info = gmres(A, b, x0=u, restart=4, maxiter=1, tol=1e-10, atol=0.0)
    r = np.linalg.norm(b - A @ u) / nb
    print(f"cycle {cycle:3d}  matvecs {4 * cycle:4d}  |r| = {r:.4e}", flush=True)
    time.sleep(0.12)
    if r < 1e-10:
        print("converged", flush=True)
        break
print(f"GMRES stopped with info = {info}", flush=True)
