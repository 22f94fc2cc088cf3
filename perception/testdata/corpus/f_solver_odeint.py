# label: faulty
# fault: solver
# runtime: 20
# what: sweep of an undamped oscillator y'' = -w^2 y over t in [0, 20] with scipy.integrate.odeint (default mxstep 500, rtol 1e-8); from w ~ 33 on LSODA runs out of steps ("ODEintWarning: Excess work done on this call") and returns stale garbage, yet the sweep continues.
import time
import numpy as np
from scipy.integrate import odeint

tgrid = np.linspace(0.0, 20.0, 21)
announced = False
for w in np.geomspace(15.0, 3000.0, 48):
    sol, info = odeint(lambda z, t: [z[1], -w * w * z[0]], [1.0, 0.0], tgrid,
                       rtol=1e-8, atol=1e-10, full_output=True)
    ok = info["message"] == "Integration successful."
    if not announced and not ok:
        labmate.log("onset", 1)          # first failed integration (its warning was just printed)
        announced = True
    err = abs(sol[-1, 0] - np.cos(w * 20.0))
    labmate.log("abs_err", err, t=w)
    print(f"w={w:.2f} y_end={sol[-1, 0]:.8f} exact={np.cos(w * 20.0):.8f} steps={int(info['nst'][-1])} ({info['message']})")
    time.sleep(0.4)
print("sweep done")
