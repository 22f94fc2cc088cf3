# label: faulty
# fault: stagnation
# runtime: 12
# what: equilibrium stock of the Ricker model N <- N exp(r (1 - N/K)) by iterating the map in a `while True` loop until two generations agree to 1e-9 K: with r = 2.25 > 2 the equilibrium N* = K is unstable and the iterates settle on a 2-cycle (about 359 and 1241) within a few hundred iterations, so the loop spins silently and busily with flat memory until its 12 s wall-clock guard raises RuntimeError.
import math
import time

# Equilibrium stock of a fish population under the Ricker stock-recruitment model
# N_{k+1} = N_k exp(r (1 - N_k / K)), found by iterating the map until two successive
# generations agree.
r = 2.25           # intrinsic growth rate fitted to the recruitment data
K = 800.0          # carrying capacity
N = 40.0
tol = 1e-9 * K
print(f"iterating the Ricker map to its equilibrium stock (r = {r}, K = {K:.0f}) ...", flush=True)
labmate.log('onset', 1)                  # the loop below never meets its tolerance
t0 = time.monotonic()
it = 0
while True:
    N_new = N * math.exp(r * (1.0 - N / K))
    it += 1
    if abs(N_new - N) < tol:
        break
    N = N_new
    if it % 50_000 == 0 and time.monotonic() - t0 > 12.0:
        raise RuntimeError(f"equilibrium not reached after {it} iterations (last N = {N:.6f})")

print(f"equilibrium stock N* = {N_new:.6f} after {it} iterations")
