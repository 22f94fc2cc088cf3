# label: healthy
# fault: none
# runtime: 6
# what: PI level control of a buffer tank (an integrating process) with measurement noise and random inflow disturbances: after a start-up overshoot of 5 cm the level settles at its declared setpoint of 1.20 m, fluctuating by about +-1 cm, and it follows a setpoint change to 1.50 m (overshoot 0.11 m, settled within a minute); a controlled quantity doing what it should.
import time
import numpy as np

rng = np.random.default_rng(31)
K = 0.02          # m/s of level change at full valve opening above the balance point
Kp, Ki = 8.0, 0.25
level, integ, dt = 1.0, 0.0, 0.5
setpoint = 1.20
print("PI level control: Kp = 8.0, Ki = 0.25 per s", flush=True)
for k in range(0, 800):
    t = k * dt
    if k == 480:
        setpoint = 1.50
        print(f"t = {t:.1f} s: setpoint changed to {setpoint:.2f} m", flush=True)
    meas = level + 0.004 * rng.standard_normal()
    err = setpoint - meas
    integ += err * dt
    u = min(100.0, max(0.0, 50.0 + Kp * err * 100 + Ki * integ * 100))
    disturbance = 0.002 * rng.standard_normal()
    level += dt * K * (u - 50.0) / 100.0 + disturbance
    if k % 10 == 0:
        print(f"t = {t:6.1f} s  setpoint = {setpoint:.2f} m  level = {meas:.4f} m  valve = {u:5.1f} %", flush=True)
        time.sleep(0.05)
