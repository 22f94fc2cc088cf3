# label: healthy
# fault: none
# runtime: 10
# what: profile log-likelihood of the maximum detection range theta of two acoustic tags (detections uniform on [0, theta]): for theta below the largest observed distance the likelihood is exactly zero, so the scan prints loglik = -inf and LR = inf for its first rows, then finite values; the second tag's scan starts again with -inf after the first one's finite rows; 'lower_bound = -inf, upper_bound = inf' before each scan and an unbounded upper_bound = inf in the summary are correct results.
import time

import numpy as np

# maximum detection range theta of two acoustic tags: detection distances are uniform on [0, theta],
# so the likelihood is theta^-n for theta >= max(x) and exactly zero (loglik = -inf) below it.
# Profile scan of the log-likelihood and of the likelihood-ratio statistic, and a one-sided 95%
# interval [lower_bound, upper_bound] that is only bounded below.
rng = np.random.default_rng(8)
tags = {"tag A": rng.uniform(0, 1.42, 25), "tag B": rng.uniform(0, 2.10, 18)}
for name, x in tags.items():
    n, xm = x.size, x.max()
    print(f"== {name}: n = {n}, max distance = {xm:.4f} km ==", flush=True)
    lower_bound, upper_bound = -np.inf, np.inf
    print(f"interval before scan: lower_bound = {lower_bound}, upper_bound = {upper_bound}", flush=True)
    best = -np.inf
    for theta in np.linspace(0.5 * xm, 1.5 * xm, 41):
        with np.errstate(divide="ignore"):
            ll = -n * np.log(theta) if theta >= xm else -np.inf
        best = max(best, ll)
        lr = 2 * (-n * np.log(xm) - ll)
        inside = lr <= 2.706           # chi2(1) 90% point: one-sided 95% interval
        print(f"theta = {theta:.4f} km   loglik = {ll:.4f}   LR = {lr:.3f}   in_CI = {int(inside)}", flush=True)
        time.sleep(0.1)
    print(f"MLE theta_hat = {xm:.4f} km, max loglik = {best:.4f}", flush=True)
    print(f"95% one-sided interval: lower_bound = {xm:.4f}, upper_bound = {xm / 0.05 ** (1 / n):.4f} km; "
          f"unbounded version: upper_bound = {upper_bound}", flush=True)
