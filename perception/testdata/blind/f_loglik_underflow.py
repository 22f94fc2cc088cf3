# label: faulty
# fault: nan
# runtime: 13
# what: sequential Bayesian estimate of a gauge's calibration offset from batches of 20 repeated length readings (Gaussian noise, sigma = 3 um) with a Metropolis sampler whose likelihood is computed as log(prod(p_i)) instead of sum(log p_i): fine for the first batches, but once about 300 readings are in, the product underflows to 0.0 and logL = -inf; from then on every Metropolis ratio is -inf - (-inf) = nan, nothing is accepted, and the chain prints logL = -inf, accept = 0.00 and a frozen offset for 45 more batches.
import time
import warnings
import numpy as np

warnings.simplefilter("ignore")
rng = np.random.default_rng(21)
sigma = 3.0
data = 1.7 + sigma * rng.standard_normal(1200)


def loglik(mu, x):
    p = np.exp(-0.5 * ((x - mu) / sigma) ** 2) / (np.sqrt(2 * np.pi) * sigma)
    return np.log(np.prod(p))


mu = 0.0
print("batch    n   offset_um   logL          accept", flush=True)
onset = False
for batch in range(1, 61):
    x = data[: 20 * batch]
    cur = loglik(mu, x)
    acc = 0
    for _ in range(100):
        prop = mu + 0.3 * rng.standard_normal()
        new = loglik(prop, x)
        if np.log(rng.uniform()) < new - cur:
            mu, cur = prop, new
            acc += 1
    if not onset and not np.isfinite(cur):
        labmate.log("onset", 1)
        onset = True
    print(f"{batch:4d} {len(x):5d}   {mu:8.4f}   logL = {cur:.6g}   accept = {acc / 100:.2f}", flush=True)
    time.sleep(0.17)
