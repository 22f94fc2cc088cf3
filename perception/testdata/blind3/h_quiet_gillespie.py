# label: healthy
# fault: none
# runtime: 8
# what: exact stochastic simulation (Gillespie's direct method) of a birth-death-dimerisation network (0 -> A at 50/s, A -> 0 at 0.1/s, 2A -> B, B -> 2A) up to t = 4500 s, with a `while t < t_end` loop that records every event and prints nothing until it ends (about 6 s of busy silence, undeclared, while the trajectory arrays grow); then the time-averaged copy numbers, which match the deterministic steady state within noise.
import math, random, time

random.seed(11)
k_in, k_out, k_d, k_u = 50.0, 0.1, 0.002, 0.5
A, B = 0, 0
t, t_end = 0.0, 4500.0
print("Gillespie SSA of 0->A, A->0, 2A->B, B->2A up to t = 4500 s (no output until it ends)...", flush=True)
ts, As, Bs = [], [], []
while t < t_end:
    a1, a2, a3, a4 = k_in, k_out * A, k_d * A * (A - 1) / 2, k_u * B
    a0 = a1 + a2 + a3 + a4
    t += -math.log(random.random()) / a0
    u = random.random() * a0
    if u < a1:
        A += 1
    elif u < a1 + a2:
        A -= 1
    elif u < a1 + a2 + a3:
        A -= 2
        B += 1
    else:
        A += 2
        B -= 1
    ts.append(t)
    As.append(A)
    Bs.append(B)
n = len(ts)
half = n // 2
meanA = sum(As[half:]) / (n - half)
meanB = sum(Bs[half:]) / (n - half)
print(f"events: {n}")
print(f"<A> = {meanA:.1f}, <B> = {meanB:.1f} over the second half of the run")
