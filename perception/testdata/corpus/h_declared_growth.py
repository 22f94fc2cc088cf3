# label: healthy
# fault: none
# watch: N < 1e20
# runtime: 3
# what: exponential growth of a bacterial culture in excess nutrient, dN/dt = r N with r = ln 2 / 20 min, integrated with RK4 over 18 hours and reported every simulated 40 minutes (a factor 4 each time): N grows from 1e3 to 1.8e19 cells, 16 decades, exactly as expected; the run declares it with --watch 'N < 1e20', which replaces the divergence detector for N.
import math
import time

r = math.log(2) / 20.0                   # per minute
N, t, dt = 1e3, 0.0, 0.5
for step in range(1, 2161):
    k1 = r * N
    k2 = r * (N + 0.5 * dt * k1)
    k3 = r * (N + 0.5 * dt * k2)
    k4 = r * (N + dt * k3)
    N += dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    t += dt
    if step % 80 == 0:
        labmate.log("N", N, t=t)
        print(f"t = {t:.0f} min, N = {N:.4e}, doublings = {math.log2(N / 1e3):.2f}", flush=True)
        time.sleep(0.12)
print(f"after {t / 60:.0f} h: N = {N:.3e} cells")
