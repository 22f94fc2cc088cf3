# label: faulty
# fault: stagnation
# runtime: 22
# what: Monte Carlo photon transport through a scattering slab: a worker thread (ThreadPoolExecutor) simulates batches of photons and passes the tallies to the main thread, which prints a table of running transmission and reflection estimates every ~0.15 s; at batch 31 the worker dies of a ZeroDivisionError that the executor keeps to itself, and the main thread waits silently (sleeping, no CPU) on the result queue: no output for 15 s, until its timeout gives up; the run was meant to process 60 batches.
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# Monte Carlo photon transport through a 2 cm slab (mu_a = 0.2, mu_s = 4.8 /cm, isotropic
# scattering): a worker thread simulates batches of photons and hands each batch's tallies to
# the main thread, which prints the running estimates of transmission and reflection.
mu_a, mu_s, thick = 0.2, 4.8, 2.0
mu_t = mu_a + mu_s
results = queue.Queue()


def batch(rng, n):
    T = R = A = 0.0
    z = np.zeros(n)
    muz = np.ones(n)
    w = np.ones(n)
    alive = np.ones(n, bool)
    while alive.any():
        s = -np.log(rng.uniform(size=alive.sum())) / mu_t
        z[alive] += muz[alive] * s
        out_t = alive & (z > thick)
        out_r = alive & (z < 0)
        T += w[out_t].sum()
        R += w[out_r].sum()
        alive &= ~(out_t | out_r)
        A += (w[alive] * mu_a / mu_t).sum()
        w[alive] *= mu_s / mu_t
        muz[alive] = rng.uniform(-1, 1, alive.sum())
        low = alive & (w < 1e-3)
        alive &= ~low
    return T / n, R / n, A / n


def worker(nbatches):
    rng = np.random.default_rng(5)
    for b in range(1, nbatches + 1):
        n = 4000
        if b == 31:
            # batch 31 is the first "big" batch: the tally arrays are preallocated per batch size,
            # and the worker's buffer check divides by the number of photons left over (zero here)
            labmate.log('onset', 1)
            n = 4000 // (nbatches - b - 29)
        results.put((b, *batch(rng, n)))
        time.sleep(0.12)
    results.put(None)


pool = ThreadPoolExecutor(max_workers=1)
fut = pool.submit(worker, 60)
Ts, Rs = [], []
print("batch  photons   T_batch   R_batch   T_mean    R_mean    T_stderr", flush=True)
while True:
    try:
        item = results.get(timeout=15.0)
    except queue.Empty:
        print("no batch received for 15 s, giving up", flush=True)
        break
    if item is None:
        break
    b, T, R, A = item
    Ts.append(T)
    Rs.append(R)
    se = np.std(Ts) / np.sqrt(len(Ts)) if len(Ts) > 1 else 0.0
    print(f"{b:5d}  {4000:7d}  {T:8.5f}  {R:8.5f}  {np.mean(Ts):8.5f}  {np.mean(Rs):8.5f}  {se:8.2e}", flush=True)
print(f"final: T = {np.mean(Ts):.5f}, R = {np.mean(Rs):.5f} over {len(Ts)} batches", flush=True)
