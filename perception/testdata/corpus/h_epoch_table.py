# label: healthy
# fault: none
# runtime: 2
# what: softmax regression on a synthetic 3-class problem (600 points, 2 features) trained by full-batch gradient descent, printing "epoch N | loss L | acc A" every epoch: the loss falls steadily from 1.1 to 0.2 and the accuracy rises to 0.95.
import time
import numpy as np

rng = np.random.default_rng(7)
centers = np.array([[0, 0], [3, 0], [0, 3]])
X = np.vstack([rng.normal(c, 0.8, size=(200, 2)) for c in centers])
y = np.repeat(np.arange(3), 200)
Xb = np.hstack([X, np.ones((600, 1))])
W = np.zeros((3, 3))
Y = np.eye(3)[y]
for epoch in range(1, 61):
    z = Xb @ W
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(p[np.arange(600), y]))
    acc = np.mean(p.argmax(axis=1) == y)
    W -= 0.1 * Xb.T @ (p - Y) / 600
    print(f"epoch {epoch} | loss {loss:.4f} | acc {acc:.3f}", flush=True)
    time.sleep(0.03)
print("training done")
