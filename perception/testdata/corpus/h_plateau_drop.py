# label: healthy
# fault: none
# runtime: 13
# what: gradient descent on the double well f(x, y) = (x^2 - 1)^2 + y^2 started next to its saddle (x = 1e-7): y relaxes at once, then the loss sits on a long plateau at 1.0 for about 400 iterations while x escapes the saddle exponentially slowly, and finally drops to 0 within a few dozen iterations — a long plateau before a drop, as in neural-network training.
import time
import numpy as np

x, y = 1e-7, 1.0
lr = 0.01
for it in range(600):
    loss = (x * x - 1) ** 2 + y * y
    gx, gy = 4 * x * (x * x - 1), 2 * y
    print(f"iter {it:4d}  loss {loss:.10f}  x {x:.6e}", flush=True)
    x, y = x - lr * gx, y - lr * gy
    time.sleep(0.02)
print("minimum at", x, y)
