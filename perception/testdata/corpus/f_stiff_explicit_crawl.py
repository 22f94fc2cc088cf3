# label: faulty
# fault: stagnation
# runtime: 25
# what: isomerisation A <-> B tracked with scipy's explicit RK45 stepper; at t = 1 ms a catalyst is added and the relaxation rate jumps from 10/s to 1e9/s, which makes the problem stiff: RK45's step collapses from 1e-4 s to its stability limit of 3e-9 s, so each line it prints (every 0.1 ms of t or 500 steps: t = …, step = …, nfev = …) moves t by 1.5 microseconds while nfev grows by 3,000; it would need hours to reach t = 0.1 s and stops only at its 25 s wall-clock guard.
import time
import numpy as np
from scipy.integrate import RK45

t_cat = 1e-3


def rate(t):
    return 10.0 if t < t_cat else 1e9


def f(t, y):
    y_eq = 0.5 + 0.1 * np.sin(100 * t)
    return [-rate(t) * (y[0] - y_eq)]


solver = RK45(f, 0.0, [1.0], t_bound=0.1, rtol=1e-6, atol=1e-9, first_step=1e-6)
start, n, onset, t_out = time.monotonic(), 0, False, 0.0
while solver.status == "running" and time.monotonic() - start < 25:
    solver.step()
    n += 1
    if not onset and solver.t > t_cat:
        labmate.log("onset", 1)                # the catalyst is in: stiff from here on
        onset = True
    if n % 500 == 0 or solver.t >= t_out:           # every 500 steps or 0.1 ms of t
        t_out = solver.t + 1e-4
        print(f"t = {solver.t:.6e} step = {solver.step_size:.3e} nfev = {solver.nfev}", flush=True)
print(f"stopped at t = {solver.t:.6e} after {n} steps ({solver.nfev} evaluations)")
