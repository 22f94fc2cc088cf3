# label: faulty
# fault: divergence
# watch: loss decreasing
# runtime: 25
# what: ridge regression by gradient descent with learning rate 2.5/L (above the 2/L limit): the component along the top Hessian eigenvector is amplified 1.5x per step, so the loss grows 2.25x per step from the first iteration on.
import time
import numpy as np

rng = np.random.default_rng(11)
n, p = 400, 20
z = rng.standard_normal((n, 1))
X = 0.9 * z + 0.3 * rng.standard_normal((n, p))     # strongly correlated features
w_true = rng.standard_normal(p)
y = X @ w_true + 0.1 * rng.standard_normal(n)
lam = 1e-2
H = X.T @ X / n + lam * np.eye(p)
L = np.linalg.eigvalsh(H)[-1]
eta = 2.5 / L
print(f"largest curvature L={L:.4f}; using learning rate {eta:.4f} (stable only below {2 / L:.4f})")
w = np.zeros(p)
for it in range(1, 501):
    if it == 1:
        labmate.log("onset", 1)               # the first unstable update
    grad = X.T @ (X @ w - y) / n + lam * w
    w -= eta * grad
    loss = 0.5 * np.mean((X @ w - y) ** 2) + 0.5 * lam * w @ w
    labmate.log("loss", loss)
    print(f"iter {it}  loss {loss:.6e}  |w| {np.linalg.norm(w):.3e}")
    time.sleep(0.05)
