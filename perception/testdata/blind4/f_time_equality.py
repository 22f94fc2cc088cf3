# label: faulty
# fault: stagnation
# runtime: 12
# what: a mass-spring-damper driven at resonance integrated with semi-implicit Euler (dt = 1e-3) in a `while t != t_end` loop: t accumulates rounding and steps past t_end = 60 without ever equalling it (after ~0.05 s of useful work), so the integration goes on silently and busily with scalar state until its 12 s wall-clock guard raises RuntimeError.
import math
import time

# Mass-spring-damper driven at resonance, integrated with semi-implicit (symplectic) Euler from rest
# to t_end, then the amplitude of the steady response compared with the analytic F0 / (c w0).
m, k, c = 1.0, 4.0, 0.4
F0 = 1.0
w0 = math.sqrt(k / m)
dt = 1e-3
t_end = 60.0
x, v, t = 0.0, 0.0, 0.0
amp = 0.0
print(f"integrating the driven oscillator to t = {t_end} with dt = {dt} ...", flush=True)
labmate.log('onset', 1)                  # t never equals t_end exactly: the loop below never stops
t0 = time.monotonic()
steps = 0
while t != t_end:
    a = (F0 * math.cos(w0 * t) - c * v - k * x) / m
    v += a * dt
    x += v * dt
    t += dt
    steps += 1
    if t > t_end - 2 * math.pi / w0:
        amp = max(amp, abs(x))
    if steps % 100_000 == 0 and time.monotonic() - t0 > 12.0:
        raise RuntimeError(f"integration did not stop: t = {t!r} after {steps} steps (t_end = {t_end})")

print(f"steady amplitude = {amp:.5f} (analytic F0/(c w0) = {F0 / (c * w0):.5f})")
