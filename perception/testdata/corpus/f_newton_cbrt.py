# label: faulty
# fault: divergence
# watch: finite(x)
# runtime: 26
# what: Newton's method: for x^3 - 8 it converges, but for f(x) = cbrt(x - 1) the Newton map is x -> 1 - 2(x - 1), so the iterates double in magnitude with alternating sign and never meet the step tolerance; it runs to its iteration cap.
import time
import numpy as np

problems = [
    ("x^3 - 8", lambda x: x ** 3 - 8.0, lambda x: 3 * x ** 2, 3.0),
    ("cbrt(x - 1)", lambda x: np.cbrt(x - 1.0), lambda x: 1.0 / (3.0 * np.cbrt(x - 1.0) ** 2), 1.5),
]
for name, f, df, x in problems:
    print(f"Newton for {name} = 0 from x0 = {x}")
    if name.startswith("cbrt"):
        labmate.log("onset", 1)            # the diverging solve starts
    for it in range(1, 501):
        dx = f(x) / df(x)
        x = x - dx
        labmate.log("x", x)
        print(f"  iter {it}  x = {x:.12g}  |dx| = {abs(dx):.3g}")
        time.sleep(0.05)
        if abs(dx) < 1e-12 * max(1.0, abs(x)):
            print(f"  converged to {x:.12g}")
            break
