# label: faulty
# fault: nan
# runtime: 15
# what: bootstrap particle filter tracking a drifting oven temperature from a noisy thermocouple, with likelihood weights exp(-0.5 (z - x)^2 / R) computed without the log-sum-exp shift: it tracks well for 15 s of data, then the thermocouple reading jumps by 40 K (a connector fault) far outside the particle cloud, every weight underflows to 0, the normalisation gives 0/0 and x_est, ESS and all particles become nan, and the filter goes on printing nan for 50 more steps.
import time
import warnings
import numpy as np

warnings.simplefilter("ignore")
rng = np.random.default_rng(8)
N, Q, R = 300, 0.05, 0.25
x_true = 150.0
particles = x_true + rng.standard_normal(N)
onset = False
print("step   z_meas    x_est     ESS", flush=True)
for k in range(1, 81):
    x_true += 0.05 + np.sqrt(Q) * rng.standard_normal()
    z = x_true + np.sqrt(R) * rng.standard_normal() + (40.0 if k >= 30 else 0.0)
    particles = particles + 0.05 + np.sqrt(Q) * rng.standard_normal(N)
    w = np.exp(-0.5 * (z - particles) ** 2 / R)
    w = w / np.sum(w)
    x_est = np.sum(w * particles)
    ess = 1.0 / np.sum(w ** 2)
    if not onset and not np.isfinite(x_est):
        labmate.log("onset", 1)
        onset = True
    print(f"{k:4d}  z = {z:8.3f}  x_est = {x_est:8.3f}  ESS = {ess:6.1f}", flush=True)
    idx = np.searchsorted(np.cumsum(w), rng.uniform(size=N) * w.sum()) if np.all(np.isfinite(w)) else np.arange(N)
    particles = np.full(N, np.nan) if not np.isfinite(x_est) else particles[np.minimum(idx, N - 1)]
    time.sleep(0.12)
