# label: faulty
# fault: nan
# runtime: 12
# what: EM for a three-component 1-D Gaussian mixture fitted to particle sizes recorded by an instrument that rounds to 0.1 um, one `it=… loglik=… sigma_min=… w_max=…` line per iteration; without a variance floor one component shrinks onto a single repeated value: its sigma falls geometrically (x0.5 per iteration) and the log-likelihood climbs without bound (a degenerate maximum, not a better fit) until sigma underflows to 0, the density at the point is inf and the log-likelihood turns nan.
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
np.seterr(all="ignore")
marked = False
sig0 = np.sqrt(0.02)
for it in range(1, 201):
    dens = w / np.sqrt(2 * np.pi * var) * np.exp(-(x[:, None] - mu) ** 2 / (2 * var))
    tot = dens.sum(axis=1)
    loglik = np.sum(np.log(tot))
    if it > 1 and np.sqrt(var.min()) < 0.05 * sig0 and not marked:
        labmate.log("onset", 1)                  # a component has shrunk to 1/20 of its start: collapsing
        marked = True
    print(f"it={it:3d} loglik={loglik:.6g} sigma_min={np.sqrt(var.min()):.4g} w_max={w.max():.4f}", flush=True)
    r = dens / tot[:, None]
    nk = r.sum(axis=0)
    w = nk / n
    mu = (r * x[:, None]).sum(axis=0) / nk
    var = (r * (x[:, None] - mu) ** 2).sum(axis=0) / nk
    time.sleep(0.05)
