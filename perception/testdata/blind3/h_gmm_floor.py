# label: healthy
# fault: none
# runtime: 2
# what: the same EM fit of a three-component Gaussian mixture to rounded particle sizes with a stuck repeated reading, with the usual variance floor (sigma >= 0.03 um, the instrument's resolution): the middle component still settles on the repeated value, its sigma pinned at the floor, the log-likelihood rises to a finite plateau, and EM stops when it changes by less than 1e-9 relative (28 iterations, 2 s).
import time
import numpy as np

rng = np.random.default_rng(3)
x = np.concatenate([rng.normal(2.0, 0.4, 300), rng.normal(4.0, 0.6, 300)])
x = np.round(x, 1)                                # the instrument's 0.1 um resolution
x = np.concatenate([x, np.full(40, 3.1)])         # a stuck reading, repeated
n, K = len(x), 3
mu = np.array([2.0, 3.1, 4.0])
var = np.array([0.3, 0.02, 0.3])               # the middle component starts narrow, at the mode
w = np.full(K, 1 / K)
prev = 0.0
for it in range(1, 1001):
    dens = w / np.sqrt(2 * np.pi * var) * np.exp(-(x[:, None] - mu) ** 2 / (2 * var))
    tot = dens.sum(axis=1)
    loglik = np.sum(np.log(tot))
    if it > 1 and abs(loglik - prev) < 1e-9 * abs(loglik):
        print(f"converged after {it} iterations: loglik={loglik:.8g}")
        break
    prev = loglik
    print(f"it={it:3d} loglik={loglik:.6g} sigma_min={np.sqrt(var.min()):.4g} w_max={w.max():.4f}", flush=True)
    r = dens / tot[:, None]
    nk = r.sum(axis=0)
    w = nk / n
    mu = (r * x[:, None]).sum(axis=0) / nk
    var = np.maximum((r * (x[:, None] - mu) ** 2).sum(axis=0) / nk, 0.03 ** 2)   # variance floor
    time.sleep(0.05)
