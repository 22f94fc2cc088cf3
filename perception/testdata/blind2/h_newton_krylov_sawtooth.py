# label: healthy
# fault: none
# runtime: 14
# what: steady nonlinear heat conduction -(k(u)u')' = q with k = 1 + 2u^2, Newton-Krylov: each Newton step runs GMRES(20) preconditioned by the constant-conductivity operator and prints its relative residual every inner iteration, so rel_resid falls from ~1 to 1e-6 and jumps back to ~1 at each new Newton step (a sawtooth, 59, 38, 22, 12, 8, 7, 18 iterations); the outer ||F|| first rises 24-fold (the first Newton step overshoots) and then converges quadratically to 5e-10.
import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, gmres, splu

# steady nonlinear heat conduction -(k(u) u')' = q on (0,1), k(u) = 1 + 2 u^2, u(0) = u(1) = 0,
# by Newton-Krylov: each Newton step solves J du = -F with GMRES(20) to rtol 1e-6, preconditioned by
# the constant-conductivity (k = 1) operator, factorised once
n = 200
h = 1.0 / (n + 1)
x = np.linspace(h, 1 - h, n)
q = 40.0 * (1 + np.sin(3 * np.pi * x))


def F(u):
    ue = np.concatenate(([0.0], u, [0.0]))
    um = 0.5 * (ue[1:] + ue[:-1])
    k = 1 + 2 * um**2
    flux = k * np.diff(ue) / h
    return -(flux[1:] - flux[:-1]) / h - q


def J(u):
    ue = np.concatenate(([0.0], u, [0.0]))
    um = 0.5 * (ue[1:] + ue[:-1])
    k = 1 + 2 * um**2
    dk = 4 * um * 0.5
    g = np.diff(ue) / h
    # d flux_j / d u_j (left end) and d u_{j+1} (right end)
    a = dk * g - k / h      # w.r.t. left node of face
    b = dk * g + k / h      # w.r.t. right node of face
    main = -(a[1:] - b[:-1]) / h
    lower = (a[1:-1]) / h
    upper = -(b[1:-1]) / h
    return sp.diags([lower, main, upper], [-1, 0, 1], format="csr")


u = np.zeros(n)
lu = splu(J(u).tocsc())
M = LinearOperator((n, n), matvec=lu.solve)
F0 = np.linalg.norm(F(u))
print(f"newton 0  ||F|| = {F0:.6e}", flush=True)
for it in range(1, 16):
    Fu = F(u)
    A = J(u)
    b = -Fu
    bn = np.linalg.norm(b)
    k = [0]

    def cb(rel):
        k[0] += 1
        print(f"  newton {it} gmres {k[0]:4d}  rel_resid = {rel:.3e}", flush=True)
        time.sleep(0.05)

    du, info = gmres(A, b, restart=20, tol=1e-6, atol=0.0, maxiter=400, M=M, callback=cb, callback_type="pr_norm")
    u = u + du
    Fn = np.linalg.norm(F(u))
    print(f"newton {it}  ||F|| = {Fn:.6e}  ||F||/||F0|| = {Fn / F0:.3e}  gmres its = {k[0]}  max u = {u.max():.6f}",
          flush=True)
    time.sleep(0.2)
    if Fn / F0 < 1e-10:
        print("converged", flush=True)
        break
