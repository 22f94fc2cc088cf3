# label: faulty
# fault: divergence
# watch: finite(y2)
# runtime: 27
# what: Robertson's stiff kinetics with explicit Euler and a step size that grows 25% per step without error control; once dt passes the stability limit (~1e-3) the intermediate species oscillates, overflows (RuntimeWarning) and turns into inf/nan, and the loop keeps stepping.
import time
import numpy as np


def rhs(y):
    return np.array([-0.04 * y[0] + 1e4 * y[1] * y[2],
                     0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                     3e7 * y[1] ** 2])


def jac(y):
    return np.array([[-0.04, 1e4 * y[2], 1e4 * y[1]],
                     [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
                     [0.0, 6e7 * y[1], 0.0]])


y = np.array([1.0, 0.0, 0.0])
t, dt = 0.0, 1e-6
unstable = False
for n in range(1, 531):
    amp = max(abs(np.linalg.eigvals(np.eye(3) + dt * jac(y)))) if np.isfinite(y).all() else np.inf
    if not unstable and amp > 1 + 1e-9:
        labmate.log("onset", 1)            # first step beyond explicit Euler's stability limit
        unstable = True
    y = y + dt * rhs(y)
    t += dt
    labmate.log("y2", y[1], t=t)
    print(f"step {n} t={t:.4e} dt={dt:.3e} y1={y[0]:.6e} y2={y[1]:.6e} y3={y[2]:.6e}")
    dt = min(dt * 1.25, 5e-3)              # "speed up": grow the step, no error control
    time.sleep(0.05)
print("integration finished")
