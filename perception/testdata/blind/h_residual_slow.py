# label: healthy
# fault: none
# runtime: 8
# what: steady temperature of a 1-D fin with convective losses solved by damped Jacobi (omega = 0.8) on 60 nodes: the residual |r| falls slowly but monotonically, by 0.8% to 1.5% per sweep, over 700 sweeps from 2e2 to 1e-2; slow, but converging steadily toward the tolerance, as Jacobi does on a diffusion problem.
import time
import numpy as np

n = 20
h = 1.0 / (n + 1)
m2 = 25.0
A = (np.diag((2 + m2 * h * h) * np.ones(n)) - np.diag(np.ones(n - 1), 1) - np.diag(np.ones(n - 1), -1)) / (h * h)
b = np.zeros(n)
b[0] = 100.0 / (h * h)
D = np.diag(A)
x = np.zeros(n)
omega = 0.8
print(f"fin equation, n = {n}, damped Jacobi omega = {omega}", flush=True)
for k in range(1, 501):
    r = b - A @ x
    x = x + omega * r / D
    if k % 10 == 0:
        print(f"sweep {k:4d}   |r| = {np.linalg.norm(r):.5e}   T_tip = {x[-1]:.4f}", flush=True)
        time.sleep(0.05)
print(f"T at the base side node = {x[0]:.3f}, tip = {x[-1]:.3f}", flush=True)
