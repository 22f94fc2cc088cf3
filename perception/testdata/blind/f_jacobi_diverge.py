# label: faulty
# fault: divergence
# runtime: 14
# what: Jacobi iteration for the steady temperatures of a 40-node conduction network: it converges on the well-conditioned network, then the second network has strong lateral links (off-diagonal sums larger than the diagonal), the Jacobi iteration matrix has spectral radius ~1.25 and res_norm grows steadily by that factor per sweep, from 1 to ~1e8, with no jump.
import time
import numpy as np

rng = np.random.default_rng(3)
n = 40


def network(coupling):
    A = np.zeros((n, n))
    for i in range(n):
        for j in (i - 1, i + 1, i - 2, i + 2):
            if 0 <= j < n:
                A[i, j] = -coupling * (1.0 if abs(i - j) == 1 else 0.6)
        A[i, i] = 3.2
    return A


def jacobi(A, b, sweeps, label):
    x = np.zeros(n)
    D = np.diag(A)
    print(f"--- Jacobi on {label}", flush=True)
    for k in range(1, sweeps + 1):
        x = (b - (A @ x - D * x)) / D
        r = np.linalg.norm(b - A @ x)
        print(f"sweep {k:3d}   res_norm = {r:.4e}   T_mid = {x[n // 2]:.5g}", flush=True)
        time.sleep(0.095)
        if r < 1e-8:
            print(f"converged after {k} sweeps", flush=True)
            break
    return x


b = 20.0 + rng.uniform(0, 5, n)
x1 = jacobi(network(0.8), b, 25, "network 1 (weak lateral links)")
A = network(1.25)
rho = max(abs(np.linalg.eigvals(np.eye(n) - A / np.diag(A)[:, None])))
labmate.log("onset", 1)
x2 = jacobi(A, b, 80, "network 2 (strong lateral links)")
print(f"spectral radius of the Jacobi matrix: {rho:.3f}")
