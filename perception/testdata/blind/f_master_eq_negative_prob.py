# label: faulty
# fault: constraint
# runtime: 12
# what: occupation probability of a trap state (capture rate 0.2/us, emission 9.75/us) from its master equation dp/dt = k_c (1 - p) - k_e p, integrated with explicit Euler: at dt = 0.02 us it relaxes to p = 0.021, but the "faster" rerun at dt = 0.2 us has dt (k_c + k_e) = 1.99, so each step overshoots: p goes negative on every other step (about -0.8 at first, still -0.3 after 100 steps, the deviation shrinking only 1% per step) and above its equilibrium in between: a probability outside [0, 1] printed for the whole run.
import time

kc, ke = 0.2, 9.75


def run(dt, steps, label, every):
    p = 1.0
    print(f"--- {label}: dt = {dt} us", flush=True)
    for n in range(1, steps + 1):
        p = p + dt * (kc * (1 - p) - ke * p)
        if n == 1 and dt > 0.1:
            labmate.log("onset", 1)
        if n % every == 0:
            print(f"t = {n * dt:7.3f} us   p_trap = {p: .5f}   p_free = {1 - p: .5f}", flush=True)
            time.sleep(0.085)
    return p


p_ref = run(0.02, 200, "reference run", 10)
p_prod = run(0.2, 100, "production run", 1)
