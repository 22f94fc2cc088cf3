# label: healthy
# fault: none
# runtime: 12
# what: the same minibatch logistic regression with a tqdm-style progress bar redrawn by carriage returns on stderr (loss in its postfix), on standardised features and with a numerically stable log-loss (logaddexp): the minibatch loss is noisy (0.3-0.7 from batch to batch) and falls slowly from 0.69 to about 0.45.
import sys, time
import numpy as np

rng = np.random.default_rng(7)
n, d = 4000, 4
X = rng.normal(size=(n, d))
X[:, 0] = rng.uniform(200, 1800, size=n)          # dose [mg]
w_true = np.array([0.004, 1.0, -0.5, 0.3])
y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w_true - 4.0)))).astype(float)
X = (X - X.mean(axis=0)) / X.std(axis=0)           # standardised
w, b, lr, bs = np.zeros(d), 0.0, 0.05, 50
epochs, nb = 6, n // bs
t0 = time.monotonic()
for ep in range(1, epochs + 1):
    perm = rng.permutation(n)
    for i in range(nb):
        idx = perm[i * bs:(i + 1) * bs]
        z = X[idx] @ w + b
        loss = np.mean(np.logaddexp(0, z) - y[idx] * z)
        p = 1 / (1 + np.exp(-z))
        g = p - y[idx]
        w -= lr * X[idx].T @ g / bs
        b -= lr * g.mean()
        k = (ep - 1) * nb + i + 1
        el = time.monotonic() - t0
        frac = k / (epochs * nb)
        full = int(10 * frac)
        sys.stderr.write(f"\repoch {ep}/{epochs}: {100 * frac:3.0f}%|{'█' * full}{' ' * (10 - full)}| {k}/{epochs * nb} "
                         f"[{el:04.1f}s<{el / frac - el:04.1f}s, {k / max(el, 1e-9):.1f}it/s, loss={loss:.4f}]")
        sys.stderr.flush()
        time.sleep(0.02)
    sys.stderr.write("\n")
print("final weights", w, b)
