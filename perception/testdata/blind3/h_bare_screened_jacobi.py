# label: healthy
# fault: none
# runtime: 13
# what: Jacobi iteration for the 1-D screened Poisson equation -u'' + k^2 u = f (k h = 0.3, 200 interior points) printing a bare table, one `it residual update` row per sweep with no header: the operator is diagonally dominant (diagonal 2.09), Jacobi's spectral radius is 2/2.09 = 0.957, and the residual falls steadily but slowly, about x0.96 per sweep, with a faster start while the rough modes die.
import time
import numpy as np

n, kh = 200, 0.3
d = 2.0 + kh * kh                      # diagonal of the screened stencil
x = np.linspace(0, 1, n + 2)[1:-1]
f = np.sin(3 * np.pi * x) * (1.0 / (n + 1)) ** 2 + 1e-6 * np.cos(40 * np.pi * x)
u = np.zeros(n)

def residual(u):
    au = d * u
    au[1:] -= u[:-1]
    au[:-1] -= u[1:]
    return np.linalg.norm(f - au) / np.linalg.norm(f)

for it in range(1, 451):
    nb = np.zeros(n)
    nb[1:] += u[:-1]
    nb[:-1] += u[1:]
    u_new = (f + nb) / d
    du = np.max(np.abs(u_new - u))
    u = u_new
    print(f"{it:5d} {residual(u):14.6e} {du:14.6e}", flush=True)
    time.sleep(0.025)
