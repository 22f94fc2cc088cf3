# label: healthy
# fault: none
# runtime: 2
# what: the stiff van der Pol oscillator (mu = 1000) integrated with scipy's implicit BDF method step by step, printing t, step and nfev every 20 steps: the step shrinks by up to 1e4 in the fast relaxation jumps and grows back on the slow branches, while t keeps moving through [0, 3000].
import time
import numpy as np
from scipy.integrate import BDF

mu = 1000.0


def f(t, y):
    return [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]]


solver = BDF(f, 0.0, [2.0, 0.0], t_bound=3000.0, rtol=1e-6, atol=1e-8)
n = 0
while solver.status == "running":
    solver.step()
    n += 1
    if n % 20 == 0:
        print(f"t = {solver.t:.6g} step = {solver.step_size:.3e} nfev = {solver.nfev}", flush=True)
        time.sleep(0.01)
print(f"finished at t = {solver.t:.1f} after {n} steps, x = {solver.y[0]:.4f}")
