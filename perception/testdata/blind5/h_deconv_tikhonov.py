# label: healthy
# fault: none
# runtime: 12
# what: Tikhonov deconvolution of a blurred two-peak spectrum by scipy.optimize.minimize (CG, analytic gradient), a callback printing each iteration's objective, |x| and |grad|; loss = misfit + lam*|D2 x|^2 is a convex quadratic, so CG creeps down for about 100 iterations (|grad| wandering between 1e-2 and 1e-5 on the ill-conditioned blur) and stops at its gradient tolerance with the two peaks restored.
import time
import numpy as np
from scipy.optimize import minimize

rng = np.random.default_rng(7)
n = 60
t = np.linspace(0.0, 1.0, n)
K = np.exp(-(t[:, None] - t[None, :]) ** 2 / (2 * 0.05 ** 2))
K /= K.sum(axis=1, keepdims=True)                  # Gaussian instrument response, rows sum to 1
x_true = np.exp(-(t - 0.35) ** 2 / 0.004) + 0.6 * np.exp(-(t - 0.7) ** 2 / 0.01)
b = K @ x_true + 0.01 * rng.standard_normal(n)     # measured, blurred, noisy spectrum
D2 = np.diff(np.eye(n), 2, axis=0)                 # second differences: roughness
lam = 1e-3


def objective(x):
    r = K @ x - b
    p = D2 @ x
    # loss = -log-posterior = misfit + lam*rough
    f = r @ r + lam * (p @ p)
    g = 2 * K.T @ r + 2 * lam * D2.T @ p
    return f, g


it = 0


def report(xk):
    global it
    it += 1
    f, g = objective(xk)
    print(f"iter {it:4d}   f = {f: .6e}   |x| = {np.linalg.norm(xk):.4e}   |grad| = {np.linalg.norm(g):.3e}", flush=True)
    time.sleep(0.1)


print(f"deconvolving {n} channels, lambda = {lam:g}, CG", flush=True)
res = minimize(objective, np.zeros(n), jac=True, method="CG", callback=report,
               options={"maxiter": 400, "gtol": 1e-5})
print(f"{res.message}  nit = {res.nit}  f = {res.fun:.6e}", flush=True)
print("peak heights:", np.round(res.x[[21, 41]], 3), flush=True)
