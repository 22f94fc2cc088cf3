# label: faulty
# fault: stagnation
# runtime: 14
# what: Metropolis Monte Carlo of a 2-D Lennard-Jones fluid (36 particles, T* = 1.0) with a step-size "adaptation" whose sign is inverted (it enlarges the step when acceptance is low instead of shrinking it): acceptance starts near 0.5, the step grows each sweep, acceptance collapses from 0.5 to 0.000-0.03 within 15 sweeps (the step reaches 1e14 box lengths) and the chain is effectively frozen: E/N barely moves for 65 sweeps while the sampler keeps running.
import time
import numpy as np

rng = np.random.default_rng(12)
N, L, T = 36, 7.5, 1.0
g = np.arange(6) * (L / 6) + 0.6
pos = np.array([(x, y) for x in g for y in g])


def energy_of(i, p, pos):
    d = pos - p
    d -= L * np.round(d / L)
    r2 = np.sum(d ** 2, axis=1)
    r2[i] = np.inf
    r2 = r2[r2 < 6.25]
    s6 = 1.0 / r2 ** 3
    return np.sum(4 * (s6 ** 2 - s6))


def total(pos):
    return 0.5 * sum(energy_of(i, pos[i], pos) for i in range(N))


step = 0.2
E = total(pos)
onset = False
print("sweep  acc_rate  step      E/N", flush=True)
for sweep in range(1, 71):
    acc = 0
    for i in range(N):
        trial = (pos[i] + step * rng.uniform(-1, 1, 2)) % L
        dE = energy_of(i, trial, pos) - energy_of(i, pos[i], pos)
        if dE < 0 or rng.uniform() < np.exp(-min(dE, 700) / T):
            pos[i] = trial
            E += dE
            acc += 1
    rate = acc / N
    step *= 1.6 if rate < 0.5 else 1.05      # bug: should shrink when rate < 0.5
    if not onset and rate < 0.05:
        labmate.log("onset", 1)
        onset = True
    print(f"{sweep:5d}  acc_rate = {rate:.3f}  step = {step:.3e}  E/N = {E / N:.5f}", flush=True)
    time.sleep(0.1)
