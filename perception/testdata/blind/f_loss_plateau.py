# label: faulty
# fault: stagnation
# runtime: 12
# what: a two-layer ReLU network trained by gradient descent to classify two interleaved half-moons toward a target loss of 1e-3, with a bias initialisation of -5 that kills every hidden unit (all ReLUs output 0, so every gradient but the output bias's is exactly zero): the cross-entropy falls to ln 2 = 0.6931 in a few epochs and then sits there, identical to 6 digits, for 90 epochs while the optimiser keeps stepping; accuracy stays at 50%.
import time
import numpy as np

rng = np.random.default_rng(2)
n = 400
t = rng.uniform(0, np.pi, n)
X = np.r_[np.c_[np.cos(t[:200]), np.sin(t[:200])], np.c_[1 - np.cos(t[200:]), 0.5 - np.sin(t[200:])]]
X += 0.1 * rng.standard_normal(X.shape)
y = np.r_[np.zeros(200), np.ones(200)]
H = 32
W1 = 0.5 * rng.standard_normal((2, H))
b1 = -5.0 * np.ones(H)
W2 = 0.5 * rng.standard_normal(H)
b2 = 1.5
lr, target = 0.5, 1e-3
print(f"MLP 2-{H}-1, lr = {lr}, target loss = {target}", flush=True)
onset = False
for epoch in range(1, 101):
    Z = X @ W1 + b1
    A = np.maximum(Z, 0)
    p = 1 / (1 + np.exp(-(A @ W2 + b2)))
    loss = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
    acc = np.mean((p > 0.5) == y)
    d = (p - y) / n
    gW2 = A.T @ d
    gb2 = d.sum()
    dZ = np.outer(d, W2) * (Z > 0)
    W1 -= lr * X.T @ dZ
    b1 -= lr * dZ.sum(axis=0)
    W2 -= lr * gW2
    b2 -= lr * gb2
    if not onset and loss - np.log(2) < 1e-3:
        labmate.log("onset", 1)
        onset = True
    print(f"epoch {epoch:3d}  loss = {loss:.6f}  acc = {acc:.3f}", flush=True)
    time.sleep(0.1)
