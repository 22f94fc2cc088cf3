# label: healthy
# fault: none
# runtime: 12
# what: Robertson's autocatalytic kinetics (k1 = 0.04, k2 = 3e7, k3 = 1e4) integrated to t = 1e5 s with scipy's implicit Radau IIA stepper, one line of t, step, nfev and the concentrations per step (a pause per step stands in for a costlier right-hand side); after the fast transient of the intermediate B the step grows in proportion to t, from 1e-4 s to 4e3 s, and the run reaches 1e5 s in under 200 steps with A + B + C = 1.
import time
import numpy as np
from scipy.integrate import Radau


def robertson(t, y):
    a, b, c = y
    return [-0.04 * a + 1e4 * b * c,
            0.04 * a - 1e4 * b * c - 3e7 * b * b,
            3e7 * b * b]


t_end = 1e5
solver = Radau(robertson, 0.0, [1.0, 0.0, 0.0], t_end, rtol=1e-6, atol=1e-10)
print(f"Robertson kinetics to t = {t_end:g} s with Radau (rtol 1e-6, atol 1e-10)", flush=True)
wall0 = time.time()
k = 0
while solver.status == "running":
    solver.step()
    k += 1
    a, b, c = solver.y
    print(f"step {k:7d}  t = {solver.t:.4e}  h = {solver.step_size:.3e}  nfev = {solver.nfev:8d}"
          f"  A = {a:.6f}  B = {b:.4e}  C = {c:.6f}", flush=True)
    time.sleep(0.05)
    if time.time() - wall0 > 12:
        print(f"wall-clock limit: stopped at t = {solver.t:.4e} s of {t_end:g} s after {k} steps", flush=True)
        break
print(f"status: {solver.status}, {k} steps, {solver.nfev} function evaluations, sum = {solver.y.sum():.8f}", flush=True)
