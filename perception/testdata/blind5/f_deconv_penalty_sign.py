# label: faulty
# fault: divergence
# runtime: 9
# what: Tikhonov deconvolution of a blurred two-peak spectrum by scipy.optimize.minimize (CG, analytic gradient), a callback printing each iteration's objective, |x| and |grad|; the smoothness penalty was carried over from a log-posterior with its sign (loss = misfit - lam*|D2 x|^2), so the objective is unbounded below along the rough modes the blur kernel cannot see: for 37 iterations CG creeps down like a healthy fit, then the objective of a sum of squares turns negative and falls a million-fold per iteration, |x| grows without bound, overflows and CG stops on "NaN result encountered".
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
    # log-posterior = -misfit - lam*rough; the minus sign of the prior was kept when negating it
    f = r @ r - lam * (p @ p)
    g = 2 * K.T @ r - 2 * lam * D2.T @ p
    return f, g


it = 0
marked = False


def report(xk):
    global it, marked
    it += 1
    f, g = objective(xk)
    if f < 0 and not marked:
        labmate.log("onset", 1)      # a sum of squares plus a penalty cannot be negative: unbounded below
        marked = True
    print(f"iter {it:4d}   f = {f: .6e}   |x| = {np.linalg.norm(xk):.4e}   |grad| = {np.linalg.norm(g):.3e}", flush=True)
    time.sleep(0.1)


print(f"deconvolving {n} channels, lambda = {lam:g}, CG", flush=True)
res = minimize(objective, np.zeros(n), jac=True, method="CG", callback=report,
               options={"maxiter": 400, "gtol": 1e-5})
print(f"{res.message}  nit = {res.nit}  f = {res.fun:.6e}", flush=True)
print("peak heights:", np.round(res.x[[21, 41]], 3), flush=True)
