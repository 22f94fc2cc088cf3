# label: healthy
# fault: none
# watch: peak decreasing
# watch: finite(peak)
# runtime: 3
# what: 2-D heat equation on a 64x64 plate, explicit 5-point scheme with r = dt/dx^2 = 0.2 (below the 0.25 limit); a hot square diffuses and its peak temperature decays monotonically.
import time
import numpy as np

n = 64
dx = 1.0 / (n - 1)
r = 0.2
dt = r * dx ** 2
u = np.zeros((n, n))
u[24:40, 24:40] = 100.0
for k in range(1, 1501):
    u[1:-1, 1:-1] += r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    if k % 10 == 0:
        peak = float(u.max())
        labmate.log("peak", peak, t=k * dt)
        print(f"step {k} t={k * dt:.5f} max_temp={peak:.6f} heat={u.sum() * dx * dx:.6f}")
        time.sleep(0.02)
print(f"final peak {peak:.4f}")
