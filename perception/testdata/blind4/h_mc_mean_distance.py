# label: healthy
# fault: none
# runtime: 8
# what: plain Monte Carlo estimate of the mean distance between two uniform random points in the unit square with a counted `while n < N` loop of scalar updates (21 million pairs, about 7 s of busy silence, memory flat); then the estimate with its standard error, within about one standard error of the exact (2 + sqrt 2 + 5 ln(1 + sqrt 2)) / 15 = 0.521405.
import math
import random

# Mean distance between two points drawn uniformly in the unit square, by plain Monte Carlo.
# Exact value (Ghosh 1951): (2 + sqrt(2) + 5 ln(1 + sqrt(2))) / 15 = 0.5214054...
random.seed(20240917)
N = 21_000_000
print(f"Monte Carlo mean distance in the unit square with N = {N} point pairs ...", flush=True)

n = 0
s = 0.0
s2 = 0.0
while n < N:
    dx = random.random() - random.random()
    dy = random.random() - random.random()
    d = math.sqrt(dx * dx + dy * dy)
    s += d
    s2 += d * d
    n += 1

mean = s / N
stderr = math.sqrt((s2 / N - mean * mean) / N)
exact = (2.0 + math.sqrt(2.0) + 5.0 * math.log(1.0 + math.sqrt(2.0))) / 15.0
print(f"mean distance = {mean:.6f} +/- {stderr:.6f} (exact {exact:.6f}, off by {abs(mean - exact) / stderr:.2f} standard errors)")
