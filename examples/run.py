"""A least-squares fit of y = a * exp(b * x) by Gauss-Newton that prints its residual as it
converges; well under labmate exec's --timeout 30s (plain Python)."""
import math

xs = [i / 49 for i in range(50)]
ys = [2.0 * math.exp(-1.3 * x) for x in xs]
a, b = 1.0, 0.0
for it in range(8):
    r = [y - a * math.exp(b * x) for x, y in zip(xs, ys)]
    ja = [math.exp(b * x) for x in xs]
    jb = [a * x * math.exp(b * x) for x in xs]
    # Normal equations of the 2x2 linear least-squares step.
    saa = sum(u * u for u in ja)
    sab = sum(u * v for u, v in zip(ja, jb))
    sbb = sum(v * v for v in jb)
    ra = sum(u * e for u, e in zip(ja, r))
    rb = sum(v * e for v, e in zip(jb, r))
    det = saa * sbb - sab * sab
    a += (sbb * ra - sab * rb) / det
    b += (saa * rb - sab * ra) / det
    print(f"iteration {it} residual={math.sqrt(sum(e * e for e in r)):.3e}")
print(f"a = {a:.4f}, b = {b:.4f}")
