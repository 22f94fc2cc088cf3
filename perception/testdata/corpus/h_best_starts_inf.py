# label: healthy
# fault: none
# runtime: 2
# what: random search for the minimum of the Rosenbrock function in [-2, 2]^2, starting from best = inf (no candidate yet) and printing the best value after every batch of 2000 candidates: inf first, then a finite value that decreases (a printed result that starts infinite is normal).
import time
import numpy as np

rng = np.random.default_rng(11)
best = np.inf
print(f"batch 0: best = {best}", flush=True)
for batch in range(1, 41):
    x = rng.uniform(-2, 2, size=(2000, 2))
    f = (1 - x[:, 0]) ** 2 + 100 * (x[:, 1] - x[:, 0] ** 2) ** 2
    best = min(best, f.min())
    print(f"batch {batch}: best = {best:.6g}, candidates = {batch * 2000}", flush=True)
    time.sleep(0.05)
print(f"best found: {best:.4g}")
