# label: healthy
# fault: none
# runtime: 13
# what: E. coli batch culture in LB at 37 C (Baranyi-Roberts model, lag 90 min, doubling time 21 min, stationary at 2e9 CFU/mL), CSV rows every 5 simulated minutes: after the lag phase the count grows exponentially, a steady factor 1.18 per row, for ~80 rows (from 1e3 to 1e9 CFU/mL, 20 doublings: the correct physics of the log phase), then levels off in the stationary phase; the growth is declared in the first line.
import time

import numpy as np

# E. coli batch culture in LB at 37 C, Baranyi-Roberts growth model: lag phase (~1.5 h), exponential
# (log) phase with a 21-minute doubling time, stationary phase at ~2e9 CFU/mL; simulated plate
# counts every 5 min with 5% counting noise, OD600 from the calibration OD = cells / 8e8
rng = np.random.default_rng(2)
mu_max = np.log(2) / 21.0          # 1/min
lag, N0, Nmax = 90.0, 1.0e3, 2.0e9
h0 = mu_max * lag
print("# batch culture, E. coli K-12, LB, 37 C: expect lag, then exponential growth, then stationary phase", flush=True)
print("time_min,cfu_per_ml,log10_cfu,od600,doublings", flush=True)
for i in range(0, 145):
    t = 5.0 * i
    A = t + np.log(np.exp(-mu_max * t) + np.exp(-h0) - np.exp(-mu_max * t - h0)) / mu_max
    lnN = np.log(N0) + mu_max * A - np.log(1 + (np.exp(mu_max * A) - 1) / (Nmax / N0))
    N = np.exp(lnN) * (1 + 0.05 * rng.normal())
    print(f"{t:.0f},{N:.4e},{np.log10(N):.3f},{N / 8e8:.5f},{np.log2(N / N0):.2f}", flush=True)
    time.sleep(0.08)
