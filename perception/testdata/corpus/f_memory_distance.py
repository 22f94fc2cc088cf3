# label: faulty
# fault: memory
# runtime: 3
# what: clustering that works on a small sample, then builds the full pairwise-distance matrix for 300k points in one np.zeros((n, n)) call; numpy raises MemoryError (Unable to allocate 671. GiB) mid-run.
import time
import numpy as np

rng = np.random.default_rng(5)
pts = rng.standard_normal((300_000, 2))
for size in (500, 1000, 2000, 3000):
    sample = pts[:size]
    d = np.sqrt(((sample[:, None, :] - sample[None, :, :]) ** 2).sum(axis=-1))
    labmate.log("mean_distance", d.mean())
    print(f"sample of {size}: mean pairwise distance={d.mean():.5f}")
    time.sleep(0.3)
print(f"building the full distance matrix for {len(pts)} points")
labmate.log("onset", 1)                      # the impossible allocation
D = np.zeros((len(pts), len(pts)))
print("matrix ready", D.shape)
