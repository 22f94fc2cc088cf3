# label: healthy
# fault: none
# watch: pi_est in [3.0, 3.3]
# runtime: 4
# what: Monte Carlo estimate of pi from batches of 200k points (numpy default_rng); the running estimate fluctuates but converges like 1/sqrt(N).
import math
import time
import numpy as np

rng = np.random.default_rng(12345)
hits = 0
total = 0
for b in range(80):
    p = rng.random((200_000, 2))
    hits += int(np.count_nonzero((p ** 2).sum(axis=1) <= 1.0))
    total += 200_000
    est = 4.0 * hits / total
    labmate.log("pi_est", est)
    print(f"samples={total} pi_est={est:.6f} sigma={math.sqrt(est * (4 - est) / total):.2e}")
    time.sleep(0.04)
print(f"pi ~ {est:.6f} (error {abs(est - math.pi):.1e})")
