# label: faulty
# fault: singular
# watch: amplitude < 1e3
# runtime: 22
# what: frequency sweep of an undamped 3-storey shear building, solving (K - w^2 M) x = f with scipy.linalg.solve at each frequency; the grid hits the first natural frequency, the matrix is singular to machine precision (LinAlgWarning: Ill-conditioned matrix), the amplitude jumps to ~1e13 and the sweep carries on with nonsense around each resonance.
import time
import numpy as np
import scipy.linalg as sl

m = np.array([2.0, 2.0, 1.0])
k = np.array([600.0, 600.0, 300.0])
M = np.diag(m)
K = np.array([[k[0] + k[1], -k[1], 0.0], [-k[1], k[1] + k[2], -k[2]], [0.0, -k[2], k[2]]])
f = np.array([0.0, 0.0, 1.0])
w2 = sl.eigh(K, M, eigvals_only=True)
print("natural frequencies (rad/s):", np.round(np.sqrt(w2), 4))
# sweep w^2 on a grid that (by construction of the report grid) contains the first eigenvalue
grid = np.concatenate([np.linspace(0.2 * w2[0], w2[0], 41), np.linspace(w2[0], 1.2 * w2[2], 400)[1:]])
announced = False
for i, s in enumerate(grid):
    A = K - s * M
    if not announced and abs(s - w2[0]) < 1e-12 * w2[0]:
        labmate.log("onset", 1)               # the singular solve
        announced = True
    x = sl.solve(A, f, assume_a="sym")
    amp = float(np.abs(x).max())
    labmate.log("amplitude", amp, t=np.sqrt(s))
    print(f"omega={np.sqrt(s):.5f} rad/s amplitude={amp:.6g} m")
    time.sleep(0.05)
print("sweep done")
