# label: healthy
# fault: none
# watch: estimate in [95, 105]
# runtime: 4
# what: scalar Kalman filter tracking a pressure held at 100 kPa by a regulator (mean-reverting random walk) from noisy sensor readings; raw and filtered series are noisy but stationary.
import time
import numpy as np

rng = np.random.default_rng(99)
setpoint, theta, q, rmeas = 100.0, 0.5, 0.2, 1.0
truth = setpoint
xhat, P = 98.0, 4.0
dt = 0.1
for k in range(1, 301):
    truth += theta * (setpoint - truth) * dt + np.sqrt(q * dt) * rng.standard_normal()
    z = truth + np.sqrt(rmeas) * rng.standard_normal()
    # predict (mean-reverting model) and update
    xhat += theta * (setpoint - xhat) * dt
    P = (1 - theta * dt) ** 2 * P + q * dt
    K = P / (P + rmeas)
    xhat += K * (z - xhat)
    P *= 1 - K
    if k % 2 == 0:
        labmate.log("reading", z, t=k * dt)
        labmate.log("estimate", xhat, t=k * dt)
        print(f"t={k * dt:.1f} reading={z:.3f} estimate={xhat:.3f} gain={K:.3f}")
        time.sleep(0.025)
print(f"steady-state Kalman gain {K:.4f}")
