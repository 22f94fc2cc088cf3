# label: faulty
# fault: solver
# runtime: 14
# what: Robertson's autocatalytic kinetics (k1 = 0.04, k2 = 3e7, k3 = 1e4) integrated to t = 1e5 s with scipy's explicit RK45 stepper, one line of t, step, nfev and the concentrations every 1000 steps; once the fast transient of the intermediate B is over (t ~ 5e-3 s) the solution varies on the scale of t itself, but the fast eigenvalue (~ -1e3..-1e4 /s) pins RK45's step at its stability limit of ~1e-3 s: t creeps by 1.5 s per line at first while nfev grows by 7000, and when its 12 s wall-clock guard ends the run t has reached only ~135 s of 1e5 after 150,000 steps and a million evaluations.
import time
import numpy as np
from scipy.integrate import RK45


def robertson(t, y):
    a, b, c = y
    return [-0.04 * a + 1e4 * b * c,
            0.04 * a - 1e4 * b * c - 3e7 * b * b,
            3e7 * b * b]


t_end = 1e5
solver = RK45(robertson, 0.0, [1.0, 0.0, 0.0], t_end, rtol=1e-6, atol=1e-10)
print(f"Robertson kinetics to t = {t_end:g} s with RK45 (rtol 1e-6, atol 1e-10)", flush=True)
wall0 = time.time()
k = 0
marked = False
while solver.status == "running":
    solver.step()
    k += 1
    if solver.t > 1e-2 and not marked:
        labmate.log("onset", 1)      # transient over: from here the step is set by stability, not accuracy
        marked = True
    if k % 1000 == 0 or solver.status != "running":
        a, b, c = solver.y
        print(f"step {k:7d}  t = {solver.t:.4e}  h = {solver.step_size:.3e}  nfev = {solver.nfev:8d}"
              f"  A = {a:.6f}  B = {b:.4e}  C = {c:.6f}", flush=True)
    if time.time() - wall0 > 12:
        print(f"wall-clock limit: stopped at t = {solver.t:.4e} s of {t_end:g} s after {k} steps", flush=True)
        break
print(f"status: {solver.status}, {k} steps, {solver.nfev} function evaluations", flush=True)
