# label: faulty
# fault: stagnation
# runtime: 13
# what: Newton's method for the steady state of a two-species reaction model whose parameters admit no real steady state (the nullclines y = x^2 + 2 and y = 1 + 0.5 x never meet): after a good solve of a feasible case, ||F|| wanders chaotically between about 1 and a few hundred for 90 iterations and never falls toward the tolerance 1e-10.
import time
import numpy as np


def solve(c, x, label, maxit):
    print(f"Newton solve: {label}", flush=True)
    for it in range(1, maxit + 1):
        F = np.array([x[0] ** 2 - x[1] + c, x[1] - 1.0 - 0.5 * x[0]])
        J = np.array([[2 * x[0], -1.0], [-0.5, 1.0]])
        nf = np.linalg.norm(F)
        print(f"it {it:3d}  ||F|| = {nf:.3e}  x = {x[0]: .5f}  y = {x[1]: .5f}", flush=True)
        time.sleep(0.1)
        if nf < 1e-10:
            print(f"converged in {it} iterations", flush=True)
            return x
        x = x - np.linalg.solve(J, F)
    print("maximum iterations reached", flush=True)
    return x


x1 = solve(0.5, np.array([0.5, 1.0]), "c = 0.5 (feasible)", 40)
labmate.log("onset", 1)
x2 = solve(2.0, np.array([0.5, 1.0]), "c = 2.0", 90)
