# label: healthy
# fault: none
# expect-silence: 30
# runtime: 4
# what: spectrum of a dense 2200x2200 symmetric matrix and SVD of a 1800x1800 one with numpy.linalg: one line, ~5 s of legitimate silence (declared), then the results.
import numpy as np

rng = np.random.default_rng(1)
print("computing a full symmetric eigendecomposition and an SVD (quiet for a few seconds)...", flush=True)
A = rng.standard_normal((2200, 2200))
A = (A + A.T) / 2
w = np.linalg.eigvalsh(A)
B = rng.standard_normal((1800, 1800))
s = np.linalg.svd(B, compute_uv=False)
labmate.log("lambda_max", w[-1])
labmate.log("cond_B", s[0] / s[-1])
print(f"eigenvalues in [{w[0]:.3f}, {w[-1]:.3f}] (semicircle radius {2 * np.sqrt(1100):.3f})")
print(f"cond(B) = {s[0] / s[-1]:.4e}")
