# label: faulty
# fault: divergence
# runtime: 16
# what: least-squares fit of a 2-parameter linear model by gradient descent with a learning rate 4% above the 2/L stability limit (lr = 2.09/L): the component along the top Hessian eigenvector is amplified by |1 - lr L| = 1.09 per step, so the loss printed every iteration grows only ×1.4 every two iterations — from 1e4 to 1e27 over 300 iterations — with no NaN, no overflow and no fast blow-up.
import time
import numpy as np

rng = np.random.default_rng(0)
X = np.column_stack([np.ones(200), rng.uniform(-1, 1, 200) * 40])
y = 3 + 0.5 * X[:, 1] + rng.normal(0, 1, 200)
H = X.T @ X / len(y)
L = np.linalg.eigvalsh(H).max()
lr = 2.09 / L
w = np.array([80.0, 2.0])
labmate.log("onset", 1)
for it in range(300):
    r = X @ w - y
    loss = 0.5 * np.mean(r * r)
    print(f"iter {it:4d}  loss {loss:.6e}", flush=True)
    w = w - lr * (X.T @ r) / len(y)
    time.sleep(0.05)
print("done")
