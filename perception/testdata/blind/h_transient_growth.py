# label: healthy
# fault: none
# runtime: 10
# what: transient amplification in a stable but non-normal linear system (a three-stage shear-flow-like chain dx/dt = A x, eigenvalues -0.2, -0.24, -0.3, off-diagonal coupling 8): the exact solution expm(A t) x0 makes ||x|| grow 37-fold in the first five samples and then on to a peak gain of 288 at t = 9 (35 samples of growth), then decay exponentially to ~5e-3; stable throughout, as the eigenvalues say.
import time
import numpy as np
from scipy.linalg import expm

A = np.array([[-0.2, 8.0, 0.0], [0.0, -0.24, 8.0], [0.0, 0.0, -0.3]])
x0 = np.array([0.0, 0.0, 1.0])
print(f"eigenvalues of A: {np.round(np.linalg.eigvals(A), 3)} (all negative: asymptotically stable)", flush=True)
times = list(np.arange(0.0, 10.0, 0.25)) + list(np.arange(10.0, 76.0, 1.0))
peak = 0.0
for t in times:
    x = expm(A * t) @ x0
    nx = np.linalg.norm(x)
    peak = max(peak, nx)
    print(f"t = {t:6.2f}   ||x|| = {nx:.4e}   gain = {nx / np.linalg.norm(x0):.4e}", flush=True)
    time.sleep(0.04)
print(f"maximum transient gain = {peak:.4g}; final ||x|| = {nx:.3e}", flush=True)
