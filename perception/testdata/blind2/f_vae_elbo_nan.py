# label: faulty
# fault: nan
# runtime: 14
# what: streaming variational Bayes (reparameterised stochastic gradients of the ELBO, mean-field Gaussian q) for the calibration weights of an 8-channel strain-gauge array, one new file of 40 readings per epoch, tqdm-like progress lines with elbo, nll and kl per reading: the file of epoch 27 contains the logger's fill value 1e30 for a dropped reading, which nobody filtered (numpy warnings are silenced); the gradient overflows, the parameters become inf/nan and elbo=nan, nll=nan, kl=nan for the remaining 34 epochs.
import time

import numpy as np

np.seterr(all="ignore")          # log(0) in the monitoring code is expected, keep the log clean
rng = np.random.default_rng(3)

# streaming calibration of a strain-gauge array, y = X w + noise (8 channels): every epoch a new
# file of 40 readings arrives and the variational posterior q(w) = N(m, diag(s^2)) is updated by
# stochastic (reparameterised) gradient ascent on the ELBO over all readings so far
d, sigma, tau, per_file, epochs = 8, 0.5, 3.0, 40, 60
w_true = rng.normal(0, 1, d)
X = rng.normal(0, 1, (per_file * epochs, d))
y = X @ w_true + rng.normal(0, sigma, per_file * epochs)
# file 27: the logger wrote its fill value 1e30 for a dropped reading and nobody filtered it
X[26 * per_file + 17, 3] = 1e30

m = np.zeros(d)
logs = np.full(d, -1.0)
lr, batch, S = 0.05, 20, 4
t0 = time.time()


def bar(frac, width=20):
    full = int(frac * width)
    return "#" * full + " " * (width - full)


for ep in range(1, epochs + 1):
    n = ep * per_file
    if ep == 27:
        labmate.log('onset', 1)        # the file with the unfiltered fill value enters the training set
    Xn, yn = X[:n], y[:n]
    for b in range(6):
        idx = rng.choice(n, batch, replace=False) if b else np.arange(n - per_file, n)[:batch]
        Xb, yb = Xn[idx], yn[idx]
        s = np.exp(logs)
        gm, gl = np.zeros(d), np.zeros(d)
        for _ in range(S):
            eps = rng.normal(0, 1, d)
            w = m + s * eps
            g = (n / batch) * Xb.T @ (yb - Xb @ w) / sigma**2 - w / tau**2
            gm += g / S
            gl += g * eps * s / S
        gl += 1.0
        m += lr / n * gm
        logs += lr / n * gl
    s = np.exp(logs)
    ll = []
    for _ in range(8):
        w = m + s * rng.normal(0, 1, d)
        r = yn - Xn @ w
        ll.append(-0.5 * np.sum(r**2) / sigma**2 - 0.5 * n * np.log(2 * np.pi * sigma**2))
    nll = -np.mean(ll)
    kl = 0.5 * np.sum((s**2 + m**2) / tau**2 - 1 - 2 * logs + 2 * np.log(tau))
    elbo = -nll - kl
    el = time.time() - t0
    left = int((epochs - ep) * el / ep)
    print(f"epoch {ep:2d}/{epochs}: {100 * ep / epochs:3.0f}%|{bar(ep / epochs)}| {ep}/{epochs} "
          f"[{int(el) // 60:02d}:{int(el) % 60:02d}<{left // 60:02d}:{left % 60:02d}, {ep / el:.2f}it/s, "
          f"elbo={elbo / n:.5g}, nll={nll / n:.5g}, kl={kl:.4g}]", flush=True)
    time.sleep(0.18)
