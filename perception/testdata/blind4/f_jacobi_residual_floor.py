# label: faulty
# fault: stagnation
# runtime: 12
# what: numpy Jacobi sweeps for a uniformly heated square plate (40 x 40 grid) in a `while res > 1e-20` loop: the discrete residual falls geometrically for about 0.4 s, then stalls at its rounding floor of 1.1e-13 (eps |u| / h^2) and can never reach 1e-20, so the loop spins silently with fixed arrays until its 12 s wall-clock guard raises RuntimeError.
import time

import numpy as np

# Steady temperature of a square plate heated uniformly, -lap(u) = q, u = 0 on the edges, by Jacobi
# iteration on a 40 x 40 interior grid; iterate until the discrete residual is below tol.
n = 40
h = 1.0 / (n + 1)
q = 1.0
u = np.zeros((n + 2, n + 2))
tol = 1e-20
print(f"Jacobi for the heated plate on a {n} x {n} grid, stopping at residual < {tol:g} ...", flush=True)
labmate.log('onset', 1)                  # the residual cannot fall below ~1e-13 in double precision
t0 = time.monotonic()
it = 0
res = np.inf
while res > tol:
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h * h * q)
    r = q - (4.0 * u[1:-1, 1:-1] - u[:-2, 1:-1] - u[2:, 1:-1] - u[1:-1, :-2] - u[1:-1, 2:]) / (h * h)
    res = np.abs(r).max()
    it += 1
    if it % 2000 == 0 and time.monotonic() - t0 > 12.0:
        raise RuntimeError(f"Jacobi did not reach residual {tol:g} after {it} sweeps (residual {res:.3e})")

print(f"converged after {it} sweeps: centre temperature {u[n // 2 + 1, n // 2 + 1]:.6f}")
