# label: healthy
# fault: none
# runtime: 2
# what: gain and phase margins of first- and second-order loops computed from the frequency response with numpy (the way margin does it): their phase never crosses -180 deg, so every design reports gain_margin = inf and phase_crossover = nan, the correct answers; a third-order loop then has a finite gain margin of 0.8, and the chosen design's infinite margin is printed again at the end.
import time
import numpy as np

w = np.logspace(-3, 3, 20001)


def margins(num, den):
    s = 1j * w
    L = np.polyval(num, s) / np.polyval(den, s)
    mag, ph = np.abs(L), np.unwrap(np.angle(L)) * 180 / np.pi
    cross = np.where(np.diff(np.sign(ph + 180)) != 0)[0]
    if len(cross) == 0:
        gm, wcg = np.inf, np.nan
    else:
        i = cross[0]
        gm, wcg = 1 / mag[i], w[i]
    gc = np.where(np.diff(np.sign(mag - 1)) != 0)[0]
    pm = 180 + ph[gc[0]] if len(gc) else np.inf
    return gm, pm, wcg


for k in [0.5, 1, 2, 4, 8]:
    gm, pm, wcg = margins([k], [1, 2, 1])       # k/(s+1)^2
    print(f"k = {k}: gain_margin = {gm}, phase_margin = {pm:.2f}, phase_crossover = {wcg}", flush=True)
    time.sleep(0.3)
gm, pm, wcg = margins([10], [1, 3, 3, 1])       # 10/(s+1)^3
print(f"third order: gain_margin = {gm:.3f}, phase_margin = {pm:.2f}, phase_crossover = {wcg:.3f}", flush=True)
time.sleep(0.3)
gm, pm, wcg = margins([2], [1, 2, 1])
print(f"chosen k = 2: gain_margin = {gm}, phase_margin = {pm:.2f}")
