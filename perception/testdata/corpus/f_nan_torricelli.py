# label: faulty
# fault: nan
# watch: finite(height)
# runtime: 24
# what: tank filled then drained through an orifice (Torricelli, dh/dt = -k*sqrt(h)) with explicit Euler and a coarse step; the last step overshoots below h = 0, np.sqrt of the negative height gives nan (RuntimeWarning: invalid value encountered in sqrt) and nan is carried for the rest of the run.
import time
import numpy as np

area, k = 2.0, 0.6
h = np.float64(0.0)
dt = 0.5
seen = False
for n in range(1, 521):
    t = n * dt
    inflow = 1.5 if t < 12 else 0.0          # the pump runs for 12 s, then the tank drains
    dh = (inflow - k * np.sqrt(h)) / area
    h = h + dt * dh
    if not seen and np.isnan(h):
        labmate.log("onset", 1)              # first nan
        seen = True
    labmate.log("height", h, t=t)
    print(f"t={t:.1f} height={h:.6g} outflow={k * np.sqrt(max(h, 0.0)) if not np.isnan(h) else h:.6g}")
    time.sleep(0.045)
print("done")
