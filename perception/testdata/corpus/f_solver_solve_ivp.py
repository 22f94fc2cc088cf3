# label: faulty
# fault: solver
# runtime: 26
# what: sweep of the Riccati-type growth law y' = c*y^2, y(0) = 1 over [0, 3.5] with solve_ivp (RK45); for c > 1/3.5 the solution blows up and every solve fails with "Required step size is less than spacing between numbers." (status -1), yet the sweep goes on.
import time
import numpy as np
from scipy.integrate import solve_ivp

announced = False
for c in np.arange(0.05, 3.0001, 0.05):
    if not announced and 1 / c < 3.5:
        labmate.log("onset", 1)          # the first solve that runs into the singularity
        announced = True
    sol = solve_ivp(lambda t, y: c * y ** 2, (0.0, 3.5), [1.0], rtol=1e-8, atol=1e-10)
    y_end = sol.y[0, -1]
    labmate.log("y_end", y_end, t=c)
    print(f"c={c:.2f} status={sol.status} t_end={sol.t[-1]:.6f} y_end={y_end:.6g} message: {sol.message}")
    time.sleep(0.4)
print("sweep done")
