# label: faulty
# fault: nan
# runtime: 12
# what: logistic regression by minibatch SGD on unstandardised features (a dose in mg, ~1e3, beside features of order 1) with a progress bar redrawn by carriage returns on stderr, tqdm-style, loss in its postfix; the log-loss is computed naively as -mean(y log p + (1-y) log(1-p)): a learning-rate warm-up with no cap (lr = 1e-6 (1 + k/4)) passes the stability limit of the dose direction (~6e-6) after about 20 batches, the dose weight then overshoots with growing amplitude, the logits reach ±1e3, p rounds to exactly 0 or 1, and 0·log(0) makes the minibatch loss nan: from then on a third of the batches print loss=nan in the bar while the weights oscillate with growing amplitude.
import sys, time
import numpy as np

rng = np.random.default_rng(7)
n, d = 4000, 4
X = rng.normal(size=(n, d))
X[:, 0] = rng.uniform(200, 1800, size=n)          # dose [mg], not standardised
w_true = np.array([0.004, 1.0, -0.5, 0.3])
y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w_true - 4.0)))).astype(float)
w, b, lr0, bs = np.zeros(d), 0.0, 1e-6, 50
np.seterr(all="ignore")
epochs, nb = 6, n // bs
marked = False
t0 = time.monotonic()
for ep in range(1, epochs + 1):
    perm = rng.permutation(n)
    for i in range(nb):
        idx = perm[i * bs:(i + 1) * bs]
        z = X[idx] @ w + b
        p = 1 / (1 + np.exp(-z))
        loss = -np.mean(y[idx] * np.log(p) + (1 - y[idx]) * np.log(1 - p))
        k = (ep - 1) * nb + i + 1
        if not np.isfinite(loss) and not marked:
            labmate.log("onset", 1)
            marked = True
        lr = lr0 * (1 + k / 4)                        # linear warm-up of the learning rate, no cap
        g = p - y[idx]
        w -= lr * X[idx].T @ g / bs
        b -= lr * g.mean()
        el = time.monotonic() - t0
        frac = k / (epochs * nb)
        full = int(10 * frac)
        sys.stderr.write(f"\repoch {ep}/{epochs}: {100 * frac:3.0f}%|{'█' * full}{' ' * (10 - full)}| {k}/{epochs * nb} "
                         f"[{el:04.1f}s<{el / frac - el:04.1f}s, {k / max(el, 1e-9):.1f}it/s, loss={loss:.4f}]")
        sys.stderr.flush()
        time.sleep(0.02)
    sys.stderr.write("\n")
print("final weights", w, b)
