# label: faulty
# fault: divergence
# runtime: 12
# what: linear regression by full-batch gradient descent with a learning rate tuned on one instrument's data (it converges there), then reused on a second instrument whose pressure channel is logged in kPa instead of bar: the Hessian's top eigenvalue grows so that lr*lambda_max = 2.15, just past the 2.0 stability limit, and the training loss grows by a steady ~1.3x per epoch for 80 epochs, from 1e2 to 1e11, with no jump.
import time
import numpy as np

rng = np.random.default_rng(7)
n = 400
lr = 0.3


def make_data(scale):
    X = rng.standard_normal((n, 3))
    X[:, 2] *= scale
    w_true = np.array([1.5, -0.7, 0.4 / scale])
    y = X @ w_true + 0.05 * rng.standard_normal(n)
    return X, y


def train(X, y, epochs, label):
    w = np.zeros(X.shape[1])
    print(f"== training on {label}: lr = {lr}, {epochs} epochs", flush=True)
    for epoch in range(1, epochs + 1):
        r = X @ w - y
        loss = 0.5 * np.mean(r ** 2)
        g = X.T @ r / n
        w -= lr * g
        print(f"epoch {epoch:3d} | train_loss {loss:.4e} | grad_norm {np.linalg.norm(g):.3e}", flush=True)
        time.sleep(0.11)
    return w


X, y = make_data(1.0)
w = train(X, y, 18, "instrument A (bar)")
print(f"instrument A fit: w = {np.round(w, 3)}", flush=True)

# instrument B logs the same pressure channel with a different unit; nobody rescaled it
scale = np.sqrt(2.15 / lr)
X, y = make_data(scale)
X[:, 2] = X[:, 2] / np.sqrt(np.mean(X[:, 2] ** 2)) * scale
w0 = np.zeros(3)
w0[2] = 3.0   # warm start from a rough earlier fit
labmate.log("onset", 1)
w = w0
print(f"== training on instrument B (kPa): lr = {lr}, 80 epochs", flush=True)
for epoch in range(1, 81):
    r = X @ w - y
    loss = 0.5 * np.mean(r ** 2)
    g = X.T @ r / n
    w = w - lr * g
    print(f"epoch {epoch:3d} | train_loss {loss:.4e} | grad_norm {np.linalg.norm(g):.3e}", flush=True)
    time.sleep(0.11)
print("training finished", flush=True)
