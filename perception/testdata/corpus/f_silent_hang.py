# label: faulty
# fault: stagnation
# runtime: 8
# what: fixed-point iteration x <- r*x*(1 - x) for the logistic map's "steady state" at r = 3.2, looping silently until successive iterates agree; at r = 3.2 the map settles on a 2-cycle, so the loop spins without output and without progress until its 8 s wall-clock guard.
import time

r = 3.2
x = 0.3
print(f"solving x = {r} x (1 - x) by fixed-point iteration...")
labmate.log("onset", 1)                       # the silent, non-converging loop starts here
t0 = time.monotonic()
it = 0
while True:
    x_new = r * x * (1 - x)
    it += 1
    if abs(x_new - x) < 1e-12:
        break
    x = x_new
    if it % 100_000 == 0 and time.monotonic() - t0 > 8.0:
        print(f"gave up after {it} iterations without convergence; last iterate {x:.12f}")
        break
