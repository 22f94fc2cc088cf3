# label: healthy
# fault: none
# runtime: 7
# what: random-walk Metropolis for the two parameters of a Michaelis-Menten fit to 3000 noisy rate measurements, with the log-likelihood summed stably in log space: logL rises from -7.8e4 to about +4.7e3 within 8 blocks (positive because the noise density with sigma = 0.05 exceeds 1) and then fluctuates there, always finite; the acceptance rate settles between 0.16 and 0.36, and the parameters wander around the true values (Vmax = 2.0, Km = 0.5), as a healthy chain should.
import time
import numpy as np

rng = np.random.default_rng(44)
S = rng.uniform(0.05, 5.0, 3000)
rate = 2.0 * S / (0.5 + S) + 0.05 * rng.standard_normal(S.size)


def loglik(th):
    vmax, km = th
    if vmax <= 0 or km <= 0:
        return -np.inf
    res = rate - vmax * S / (km + S)
    return -0.5 * np.sum((res / 0.05) ** 2) - S.size * np.log(0.05 * np.sqrt(2 * np.pi))


th = np.array([1.6, 0.8])
cur = loglik(th)
print("block   Vmax     Km       logL          acc_rate", flush=True)
for block in range(1, 61):
    acc = 0
    for _ in range(40):
        prop = th + np.array([0.004, 0.004]) * rng.standard_normal(2)
        new = loglik(prop)
        if np.log(rng.uniform()) < new - cur:
            th, cur = prop, new
            acc += 1
    print(f"{block:5d}   {th[0]:.4f}   {th[1]:.4f}   logL = {cur:.2f}   acc_rate = {acc / 40:.2f}", flush=True)
    time.sleep(0.04)
