# label: faulty
# fault: nan
# runtime: 16
# what: a first-order drain of a species with a square-root rate law, dA/dt = -k sqrt(A), integrated by explicit Euler with a coarse step and logged as CSV rows (time,conc_A,conc_B,rate): near depletion one step overshoots A below zero, sqrt of the negative concentration is nan, and every later row carries nan in conc_A, conc_B and rate while the log goes on for 80 rows.
import time
import numpy as np

k, dt = 1.0, 0.3
a, b = 1.0, 0.0
print("time,conc_A,conc_B,rate", flush=True)
onset = False
for i in range(1, 81):
    rate = k * np.sqrt(a)
    a, b = a - dt * rate, b + dt * rate
    if not onset and np.isnan(rate):
        labmate.log("onset", 1)              # the first nan row
        onset = True
    print(f"{i * dt:.1f},{a:.6g},{b:.6g},{rate:.6g}", flush=True)
    time.sleep(0.2)
