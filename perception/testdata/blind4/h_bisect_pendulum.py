# label: healthy
# fault: none
# runtime: 9
# what: the amplitude at which a pendulum's period is 1.5 times its small-angle period, T/T0 = (2/pi) K(sin(theta0/2)), by bisection in a `while True` loop that breaks when the bracket is below 1e-11, each step evaluating K with a hand-written 1.76-million-node Simpson sum (expensive scalar function): 38 steps, about 8 s of busy silence with flat memory, then theta0 = 132.68 deg, checked against scipy's ellipk.
import math

from scipy.special import ellipk

# Amplitude at which a simple pendulum's period is 1.5 times its small-angle period T0.
# T / T0 = (2 / pi) K(k), k = sin(theta0 / 2), with K evaluated by a composite Simpson rule
# written out by hand (the expensive scalar function), and the amplitude found by bisection.


def period_ratio(theta0, n=1_760_000):
    k2 = math.sin(0.5 * theta0) ** 2
    h = 0.5 * math.pi / n
    total = 1.0 + 1.0 / math.sqrt(1.0 - k2)
    i = 1
    while i < n:
        s = math.sin(i * h)
        w = 4.0 if i % 2 else 2.0
        total += w / math.sqrt(1.0 - k2 * s * s)
        i += 1
    K = total * h / 3.0
    return 2.0 / math.pi * K


target = 1.5
a, b = 0.5, 3.0
fa = period_ratio(a) - target
print(f"bisection for the amplitude with T/T0 = {target} on [{a}, {b}] rad ...", flush=True)
it = 0
while True:
    c = 0.5 * (a + b)
    fc = period_ratio(c) - target
    it += 1
    if (fc < 0) == (fa < 0):
        a, fa = c, fc
    else:
        b = c
    if b - a < 1e-11:
        break

theta0 = 0.5 * (a + b)
check = 2.0 / math.pi * ellipk(math.sin(0.5 * theta0) ** 2)
print(f"theta0 = {theta0:.10f} rad = {math.degrees(theta0):.6f} deg after {it} bisections; "
      f"T/T0 there from scipy's ellipk = {check:.10f}")
