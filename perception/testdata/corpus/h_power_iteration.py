# label: healthy
# fault: none
# watch: finite(lambda_est)
# runtime: 3
# what: power iteration for the dominant eigenvalue of a 300x300 symmetric matrix with eigenvalue ratio 0.98: slow, steady geometric convergence of the Rayleigh quotient.
import time
import numpy as np

rng = np.random.default_rng(8)
n = 300
Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
lam = np.concatenate(([10.0, 9.8], np.linspace(9.0, 1.0, n - 2)))
A = (Q * lam) @ Q.T
v = rng.standard_normal(n)
v /= np.linalg.norm(v)
for it in range(1, 1201):
    w = A @ v
    v = w / np.linalg.norm(w)
    if it % 8 == 0:
        rq = float(v @ A @ v)
        labmate.log("lambda_est", rq)
        print(f"iter {it:4d}  rayleigh={rq:.12f}  gap={10.0 - rq:.3e}")
        time.sleep(0.02)
print(f"dominant eigenvalue ~ {rq:.10f}")
