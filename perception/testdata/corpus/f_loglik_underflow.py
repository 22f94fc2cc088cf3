# label: faulty
# fault: nan
# runtime: 15
# what: sequential Bayesian update of a Gaussian mean as data arrive in batches of 20, with the likelihood of all data so far computed as np.log(np.prod(pdf)) instead of a sum of logs: the product of a few hundred densities underflows to 0.0 and the printed log-likelihood turns to -inf mid-run (numpy warns "divide by zero encountered in log"), after which the posterior update is meaningless, yet the loop goes on to batch 150.
import time
import numpy as np

rng = np.random.default_rng(3)
data = np.empty(0)
mu = 0.0
logged = False
for batch in range(150):
    data = np.concatenate([data, rng.normal(1.5, 2.0, 20)])
    pdf = np.exp(-0.5 * ((data - mu) / 2.0) ** 2) / (2.0 * np.sqrt(2 * np.pi))
    p = np.prod(pdf)
    if p == 0.0 and not logged:
        labmate.log("onset", 1)
        logged = True
    logL = np.log(p)
    mu = 0.9 * mu + 0.1 * data.mean()
    print(f"batch {batch:3d} n={data.size} mu={mu:.4f} logL={logL:.3f}", flush=True)
    time.sleep(0.1)
print("posterior mean", mu)
