# label: healthy
# fault: none
# runtime: 7
# what: a three-layer deep linear network (4-4-4-4) learning a rank-one linear map (singular value 2.5) from a small initialisation (weights ~3e-3) by gradient descent: training sits on the saddle at the origin with the loss flat at 3.125 for about 4000 of 5200 iterations (80% of the run), then drops within ~200 iterations to 1e-11 (the known, healthy plateau of deep networks).
import time
import numpy as np

rng = np.random.default_rng(0)
U, _ = np.linalg.qr(rng.standard_normal((4, 4)))
V, _ = np.linalg.qr(rng.standard_normal((4, 4)))
T = 2.5 * np.outer(U[:, 0], V[:, 0])
W1, W2, W3 = (0.003 * rng.standard_normal((4, 4)) for _ in range(3))
lr = 0.02
print(f"deep linear net 4-4-4-4, lr = {lr}, init scale 3e-3", flush=True)
for it in range(1, 5201):
    E = W3 @ W2 @ W1 - T
    loss = 0.5 * np.sum(E ** 2)
    g3 = E @ (W2 @ W1).T
    g2 = W3.T @ E @ W1.T
    g1 = (W3 @ W2).T @ E
    W1 -= lr * g1
    W2 -= lr * g2
    W3 -= lr * g3
    if it % 50 == 0:
        print(f"iter {it:5d}   loss = {loss:.6e}", flush=True)
        time.sleep(0.04)
print(f"final loss = {loss:.3e}", flush=True)
