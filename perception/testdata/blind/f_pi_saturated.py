# label: faulty
# fault: constraint
# runtime: 16
# what: PI temperature control of a small furnace (first-order, 90 s time constant) whose heater saturates at 100%: it holds 60 C well, then the setpoint is raised to 180 C, which needs more power than the heater has: T levels off near 130 C, 50 K below the declared setpoint, for the rest of the run while the integral winds up and u stays pinned at 100%.
import time
import numpy as np

rng = np.random.default_rng(5)
K, tau, Tamb = 1.1, 90.0, 20.0      # K per % heater power, s, C
Kp, Ki = 4.0, 0.08
dt = 1.0
T, integ = Tamb, 0.0
setpoint = 60.0
print("PI furnace control: Kp = 4.0, Ki = 0.08, heater limited to 0..100 %", flush=True)
for k in range(0, 1100):
    t = k * dt
    if k == 300:
        setpoint = 180.0
        print(f"t = {t:.0f} s: new setpoint = {setpoint:.0f} C", flush=True)
    err = setpoint - T
    integ += err * dt
    u = min(100.0, max(0.0, Kp * err + Ki * integ))
    T += dt * (-(T - Tamb) + K * u) / tau
    Tm = T + 0.2 * rng.standard_normal()
    if k == 420:
        labmate.log("onset", 1)
    if k % 10 == 0:
        print(f"t = {t:6.0f} s  setpoint = {setpoint:.1f} C  T = {Tm:7.2f} C  u = {u:6.2f} %", flush=True)
        time.sleep(0.1)
