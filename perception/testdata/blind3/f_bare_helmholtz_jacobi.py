# label: faulty
# fault: divergence
# runtime: 14
# what: Jacobi iteration for the 1-D Helmholtz equation -u'' - k^2 u = f (k h = 0.3, 200 interior points) printing a bare table, one `it residual update` row per sweep with no header: the shifted operator is indefinite (diagonal 2 - (kh)^2 < 2), so Jacobi's iteration matrix has spectral radius 2/1.91 = 1.047 and the smooth error mode grows x1.047 per sweep: the residual first falls as the rough modes are damped, then grows steadily, 9 decades over the run, without a jump, a NaN or a message.
import time
import numpy as np

n, kh = 200, 0.3
d = 2.0 - kh * kh                      # diagonal of the shifted (Helmholtz) stencil
x = np.linspace(0, 1, n + 2)[1:-1]
f = np.sin(3 * np.pi * x) * (1.0 / (n + 1)) ** 2
u = np.zeros(n)

def residual(u):
    au = d * u
    au[1:] -= u[:-1]
    au[:-1] -= u[1:]
    return np.linalg.norm(f - au) / np.linalg.norm(f)

r0 = residual(u)
marked = False
for it in range(1, 451):
    nb = np.zeros(n)
    nb[1:] += u[:-1]
    nb[:-1] += u[1:]
    u_new = (f + nb) / d
    du = np.max(np.abs(u_new - u))
    u = u_new
    res = residual(u)
    if res > r0 and not marked:
        labmate.log("onset", 1)            # the residual is back above its start and still climbing
        marked = True
    print(f"{it:5d} {res:14.6e} {du:14.6e}", flush=True)
    time.sleep(0.025)
