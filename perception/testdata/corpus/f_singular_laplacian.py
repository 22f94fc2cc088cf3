# label: faulty
# fault: singular
# runtime: 2
# what: heat diffusion on a path graph with implicit Euler (well posed), followed by a "steady state" solve L x = b with the bare graph Laplacian, which is exactly singular: numpy raises LinAlgError: Singular matrix mid-run.
import time
import numpy as np

n = 12
L = np.zeros((n, n))
for i in range(n - 1):                      # path graph Laplacian (integer entries)
    L[i, i] += 1; L[i + 1, i + 1] += 1
    L[i, i + 1] -= 1; L[i + 1, i] -= 1
x = np.zeros(n)
x[0] = 100.0
dt = 0.5
A = np.eye(n) + dt * L                      # implicit Euler matrix: nonsingular
for step in range(1, 41):
    x = np.linalg.solve(A, x)
    labmate.log("spread", x.max() - x.min(), t=step * dt)
    print(f"t={step * dt:.1f} spread={x.max() - x.min():.6f} mean={x.mean():.6f}")
    time.sleep(0.05)
print("now solving for the steady state with a unit source at node 0 and sink at node 11")
b = np.zeros(n)
b[0], b[-1] = 1.0, -1.0
labmate.log("onset", 1)                     # the singular solve
potential = np.linalg.solve(L, b)           # L is singular: LinAlgError
print("potential drop", potential[0] - potential[-1])
