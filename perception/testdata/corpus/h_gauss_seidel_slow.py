# label: healthy
# fault: none
# watch: error_norm decreasing
# runtime: 3
# what: red-black Gauss-Seidel for the 2-D Poisson equation on a 40x40 grid; converges slowly (rate ~0.99 per sweep) with residual and A-norm error falling steadily until the tolerance is met.
import time
import numpy as np

n = 40
h = 1.0 / (n + 1)
x = np.linspace(h, 1 - h, n)
X, Y = np.meshgrid(x, x, indexing="ij")
exact = np.sin(np.pi * X) * np.sin(2 * np.pi * Y)
f = 5 * np.pi ** 2 * exact               # -lap(u) = f
u = np.zeros((n + 2, n + 2))
red = ((np.add.outer(np.arange(n), np.arange(n))) % 2) == 0
black = ~red


def apply_A(v):
    w = np.zeros((n + 2, n + 2))
    w[1:-1, 1:-1] = v
    return (4 * v - w[2:, 1:-1] - w[:-2, 1:-1] - w[1:-1, 2:] - w[1:-1, :-2]) / h ** 2


# discrete solution (for the A-norm of the error, which Gauss-Seidel decreases monotonically)
from scipy.sparse import diags, identity, kron
from scipy.sparse.linalg import spsolve
T = diags([-1, 2, -1], [-1, 0, 1], shape=(n, n))
A = (kron(T, identity(n)) + kron(identity(n), T)) / h ** 2
ustar = spsolve(A.tocsc(), f.ravel()).reshape(n, n)

r0 = np.linalg.norm(f)
sweep = 0
while True:
    for mask in (red, black):
        nb = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
        new = (h ** 2 * f + nb) / 4
        u[1:-1, 1:-1][mask] = new[mask]
    sweep += 1
    if sweep % 10 == 0:
        v = u[1:-1, 1:-1]
        res = np.linalg.norm(f - apply_A(v)) / r0
        e = v - ustar
        enorm = float(np.sqrt(np.sum(e * apply_A(e))))
        labmate.log("error_norm", enorm)
        print(f"sweep {sweep:4d}  residual = {res:.6e}")
        time.sleep(0.03)
        if res < 1e-6:
            break
print(f"converged in {sweep} sweeps; max error vs exact {np.abs(u[1:-1, 1:-1] - exact).max():.3e}")
