# label: healthy
# fault: none
# runtime: 14
# what: softmax regression of three overlapping Gaussian classes by minibatch SGD (batch 8, lr 0.15), logged with the logging module (timestamps, INFO, on stderr): the minibatch nll jumps between 0.4 and 1.2 and acc between 0.25 and 1.0 from one step to the next for 600 steps, while the full-data nll (eval lines every 100 steps) falls from 1.1 to 0.69 and settles: healthy noisy training.
import logging
import time

import numpy as np

logging.basicConfig(level=logging.INFO, force=True, format="%(asctime)s %(levelname)s %(message)s")
rng = np.random.default_rng(21)
# softmax regression of 3 overlapping Gaussian clusters (galaxy colour classes), minibatch SGD, batch 8
n, d, K = 3000, 2, 3
means = np.array([[0.0, 0.0], [1.6, 0.4], [0.6, 1.5]])
lab = rng.integers(0, K, n)
Xd = means[lab] + rng.normal(0, 0.9, (n, d))
Xd = np.hstack((Xd, np.ones((n, 1))))
W = np.zeros((d + 1, K))
lr, bs = 0.15, 8


def nll_acc(Xb, yb):
    z = Xb @ W
    z -= z.max(axis=1, keepdims=True)
    lp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -lp[np.arange(len(yb)), yb].mean(), (lp.argmax(axis=1) == yb).mean(), lp


for step in range(1, 601):
    idx = rng.integers(0, n, bs)
    Xb, yb = Xd[idx], lab[idx]
    nll, acc, lp = nll_acc(Xb, yb)
    P = np.exp(lp)
    P[np.arange(bs), yb] -= 1
    W -= lr * Xb.T @ P / bs
    if step % 4 == 0:
        logging.info("step=%d nll=%.4f acc=%.3f lr=%.3f", step, nll, acc, lr)
        time.sleep(0.08)
    if step % 100 == 0:
        full_nll, full_acc, _ = nll_acc(Xd, lab)
        logging.info("eval step=%d full_nll=%.4f full_acc=%.4f", step, full_nll, full_acc)
