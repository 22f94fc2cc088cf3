# label: faulty
# fault: stagnation
# runtime: 15
# what: conjugate gradients, the right solver for the 2-D Poisson problem (SPD, 6400 unknowns; it converges to 1e-8 in 238 iterations), reused unchanged for the Helmholtz problem -Lap u - k^2 u = f at k = 90, whose operator is indefinite (k^2 = 8100 lies inside the spectrum of -Lap): after 6 iterations the residual reaches rel = 3.8e-4 and then never improves, wandering between 8e-5 and 1e-2 (rnorm printed every 3 iterations in logging-module lines) for the remaining 490 iterations towards tol 1e-8; onset at the first iteration whose residual is 3x above its best so far.
import logging
import sys
import time

import numpy as np
import scipy.sparse as sp

logging.basicConfig(stream=sys.stdout, level=logging.INFO, force=True,
                    format="%(asctime)s %(levelname)s %(name)s: %(message)s")
log = logging.getLogger("helmholtz")

n = 80
h = 1.0 / (n + 1)
T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]) / h**2
I = sp.identity(n)
L = (sp.kron(T, I) + sp.kron(I, T)).tocsr()          # -Laplacian, Dirichlet walls
xg = np.linspace(h, 1 - h, n)
X, Y = np.meshgrid(xg, xg)
f = np.exp(-80 * ((X - 0.3) ** 2 + (Y - 0.6) ** 2)).ravel()   # a point-like source


def cg(A, b, tol, maxit, label, every, pace, onset_hook=None):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rr = r @ r
    r0 = np.sqrt(rr)
    log.info("%s: n=%d tol=%.1e maxit=%d", label, b.size, tol, maxit)
    for it in range(1, maxit + 1):
        Ap = A @ p
        alpha = rr / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rr_new = r @ r
        rnorm = np.sqrt(rr_new)
        if onset_hook:
            onset_hook(it, rnorm / r0)
        if it % every == 0:
            log.info("cg iter=%d rnorm=%.4e rel=%.3e", it, rnorm, rnorm / r0)
            time.sleep(pace)
        if rnorm / r0 < tol:
            log.info("%s: converged in %d iterations", label, it)
            return x, it
        p = r + (rr_new / rr) * p
        rr = rr_new
    log.warning("%s: no convergence after %d iterations (rel=%.2e)", label, maxit, rnorm / r0)
    return x, maxit


# 1) Poisson problem (k = 0): symmetric positive definite, CG is the right tool.
cg(L, f, 1e-8, 600, "poisson k=0", 4, 0.04)

# 2) Helmholtz problem at k = 90: -Lap u - k^2 u = f.  The operator is now indefinite
#    (k^2 = 8100 lies inside the spectrum of -Lap, whose eigenvalues run from 20 to 52000),
#    but the same CG routine is reused.
k = 90.0
A = (L - k**2 * sp.identity(n * n)).tocsr()
lam_min = 2 * np.pi**2
log.info("helmholtz k=%.1f: k^2=%.1f, lowest eigenvalue of -Lap=%.1f", k, k**2, lam_min)
state = {"best": np.inf, "logged": False}


def watch(it, rel):
    # ground truth: the stall begins at the first iteration whose residual is 3x above its best so far
    if not state["logged"] and rel > 3 * state["best"]:
        labmate.log('onset', 1)
        state["logged"] = True
    state["best"] = min(state["best"], rel)


cg(A, f, 1e-8, 500, "helmholtz k=90", 3, 0.06, watch)
