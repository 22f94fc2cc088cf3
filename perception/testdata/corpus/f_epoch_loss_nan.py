# label: faulty
# fault: nan
# runtime: 16
# what: logistic regression on unscaled features (values up to 100) trained by gradient descent with a learning rate of 5, the cross-entropy computed naively as -mean(y log p + (1-y) log(1-p)), printing "epoch N | loss L | acc A": after one step the weights are so large that the sigmoid saturates to exactly 0 and 1, and y log p + (1-y) log(1-p) becomes 0 * (-inf) = nan: from the second epoch on the training prints "loss nan" for all its 80 epochs while the weights keep jumping.
import time
import warnings
import numpy as np

warnings.filterwarnings("ignore")            # a user who silenced numpy's warnings
rng = np.random.default_rng(1)
X = np.hstack([rng.uniform(0, 100, (400, 2)), np.ones((400, 1))])
y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 10, 400) > 75).astype(float)
w = np.zeros(3)
onset = False
for epoch in range(1, 81):
    p = 1 / (1 + np.exp(-(X @ w)))
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    acc = np.mean((p > 0.5) == (y > 0.5))
    grad = X.T @ (p - y) / len(y)
    w -= 5.0 * grad
    if not onset and np.isnan(loss):
        labmate.log("onset", 1)              # the first nan loss
        onset = True
    print(f"epoch {epoch} | loss {loss:.6g} | acc {acc:.3f}", flush=True)
    time.sleep(0.2)
print("training finished")
