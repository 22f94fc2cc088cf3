# label: healthy
# fault: none
# watch: loss decreasing
# runtime: 3
# what: logistic regression (500 samples, 10 features) with badly scaled features, trained by full-batch gradient descent with step 1/L (L = ||X||^2/4n); the convex loss decreases monotonically.
import time
import numpy as np

rng = np.random.default_rng(3)
n, p = 500, 10
X = rng.standard_normal((n, p)) * np.geomspace(1.0, 0.03, p)   # badly scaled features: slow convergence
w_true = rng.standard_normal(p) / np.geomspace(1.0, 0.03, p) * 0.3
y = (rng.random(n) < 1 / (1 + np.exp(-X @ w_true))).astype(float)
L = np.linalg.norm(X, 2) ** 2 / (4 * n)
eta = 1.0 / L
w = np.zeros(p)


def loss_fn(w):
    z = X @ w
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


for it in range(1, 2001):
    z = X @ w
    grad = X.T @ (1 / (1 + np.exp(-z)) - y) / n
    w -= eta * grad
    if it % 20 == 0:
        loss = loss_fn(w)
        labmate.log("loss", loss)
        acc = np.mean((X @ w > 0) == (y > 0.5))
        print(f"epoch {it:4d}  train loss {loss:.8f}  accuracy {acc:.3f}")
        time.sleep(0.03)
print(f"final loss {loss:.6f}")
