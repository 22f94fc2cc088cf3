# label: faulty
# fault: divergence
# watch: finite(peak)
# runtime: 23
# what: 2-D heat equation with the explicit 5-point scheme at r = dt/dx^2 = 0.3 (above the 0.25 limit) from a hot square; the checkerboard mode grows 1.4x per step, the temperature field oscillates in sign with exploding amplitude.
import time
import numpy as np

n = 48
dx = 1.0 / (n - 1)
r = 0.3                                       # the mistake: needs r <= 0.25
dt = r * dx ** 2
u = np.zeros((n, n))
u[16:32, 16:32] = 100.0
print(f"explicit heat solver: n={n} dt={dt:.3e} r={r}")
for k in range(1, 551):
    if k == 1:
        labmate.log("onset", 1)              # the first step of the unstable integration
    u[1:-1, 1:-1] += r * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
    peak = float(np.abs(u).max())
    labmate.log("peak", peak, t=k * dt)
    print(f"step {k} t={k * dt:.6f} peak={peak:.6g} center={u[n // 2, n // 2]:.6g}")
    time.sleep(0.04)
