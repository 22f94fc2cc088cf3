# label: faulty
# fault: nan
# runtime: 15
# what: annealed importance sampling of the evidence of a sharply peaked 2-D likelihood (a spectral line fit), logging one JSON record per temperature rung with json.dumps: the weights are averaged as log(mean(exp(logw))) without the log-sum-exp shift; once the rungs get cold the log-weights fall below -745, exp underflows to 0 and log_Z becomes -Infinity, and the next normalisation 0/0 makes ess and the posterior mean NaN for the remaining 40 rungs.
import json
import time
import warnings
import numpy as np

warnings.simplefilter("ignore")
rng = np.random.default_rng(4)
N = 500
betas = np.linspace(0.0, 1.0, 61) ** 3
theta = rng.uniform(-10, 10, size=(N, 2))


def loglike(th):
    return -0.5 * np.sum(((th - np.array([1.2, -0.4])) / 0.002) ** 2, axis=1)


logw = np.zeros(N)
onset = False
for k in range(1, len(betas)):
    logw += (betas[k] - betas[k - 1]) * loglike(theta)
    w = np.exp(logw)
    log_z = float(np.log(np.mean(w)))
    wn = w / np.sum(w)
    ess = float(1.0 / np.sum(wn ** 2))
    mean = (wn[:, None] * theta).sum(axis=0)
    if not onset and not np.isfinite(log_z):
        labmate.log("onset", 1)
        onset = True
    rec = {"rung": k, "beta": round(float(betas[k]), 6), "log_Z": log_z, "ess": ess,
           "mean_x": float(mean[0]), "mean_y": float(mean[1])}
    print(json.dumps(rec), flush=True)
    # one Metropolis move per particle at this temperature
    prop = theta + 0.05 * rng.standard_normal(theta.shape)
    ok = np.log(rng.uniform(size=N)) < betas[k] * (loglike(prop) - loglike(theta))
    ok &= np.all(np.abs(prop) < 10, axis=1)
    theta[ok] = prop[ok]
    time.sleep(0.17)
