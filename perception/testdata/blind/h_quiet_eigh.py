# label: healthy
# fault: none
# expect-silence: 30
# runtime: 17
# what: normal modes of a 1000-atom disordered harmonic chain with random masses and springs (a dense generalised symmetric eigenproblem K v = w^2 M v solved by scipy.linalg.eigh): two lines, then a few seconds of legitimate, declared silence while the solver works, then the lowest and highest frequencies and the participation ratio of the modes.
import numpy as np
from scipy.linalg import eigh

rng = np.random.default_rng(9)
n = 1000
k = rng.uniform(0.5, 1.5, n + 1)
m = rng.uniform(1.0, 3.0, n)
K = np.diag(k[:-1] + k[1:]) - np.diag(k[1:-1], 1) - np.diag(k[1:-1], -1)
M = np.diag(m)
print(f"disordered chain: {n} atoms, masses in [1, 3], springs in [0.5, 1.5]", flush=True)
print("solving the generalised eigenproblem (quiet for a few seconds)...", flush=True)
w2, V = eigh(K, M)
w2b = eigh(K + 0.01 * np.eye(n), M, eigvals_only=True)
w = np.sqrt(w2)
pr = 1.0 / np.sum(V ** 4, axis=0) / n
print(f"lowest frequency  = {w[0]:.6f}")
print(f"highest frequency = {w[-1]:.6f}")
print(f"mean participation ratio = {pr.mean():.4f} (localised modes at high frequency: {pr[-50:].mean():.4f})")
print(f"shift check: mean change of w^2 = {np.mean(w2b - w2):.5f}")
