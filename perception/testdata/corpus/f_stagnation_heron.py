# label: faulty
# fault: stagnation
# runtime: 25
# what: Heron's square-root iteration stopped by |x*x - a| <= 1e-18; it terminates for perfect squares, but for a = 2 the best double leaves a residual of 4.4e-16, so the loop repeats the same iterate and residual until its cap.
import time

for a in (16.0, 2.25, 81.0, 2.0):
    x = a
    it = 0
    previous = None
    announced = False
    print(f"sqrt({a}) by Heron's method")
    while abs(x * x - a) > 1e-18 and it < 480:
        x = 0.5 * (x + a / x)
        it += 1
        if a == 2.0 and not announced and x == previous:
            labmate.log("onset", 1)          # the iterate stopped changing
            announced = True
        previous = x
        labmate.log("residual", abs(x * x - a))
        print(f"  iter {it}  x = {x:.17g}  residual = {abs(x * x - a):.6e}")
        time.sleep(0.05)
    print(f"  result {x:.17g} after {it} iterations")
