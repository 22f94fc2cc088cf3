# label: healthy
# fault: none
# watch: overshoot_pct <= 5
# watch: temperature < 80
# runtime: 3
# what: PID temperature control of a heated block (two thermal lags, 1 s and 0.5 s) from 20 C to 70 C with Kp=3, Ki=1.5, Kd=1: about 2% overshoot, inside the watched 5% bound.
import time

Kp, Ki, Kd = 3.0, 1.5, 1.0
dt, T = 1e-3, 12.0
T0, Tset = 20.0, 70.0
x1 = x2 = 0.0          # deviations from ambient
integ = 0.0
eprev = Tset - T0
peak = T0
for n in range(1, int(T / dt) + 1):
    temp = T0 + x2
    e = Tset - temp
    integ += e * dt
    deriv = (e - eprev) / dt
    eprev = e
    u = Kp * e + Ki * integ + Kd * deriv
    x1 += dt * (-x1 + u)
    x2 += dt * (-x2 + x1) / 0.5
    peak = max(peak, temp)
    if n % 50 == 0:
        t = n * dt
        overshoot = max(0.0, (peak - Tset) / (Tset - T0) * 100)
        labmate.log("temperature", temp, t=t)
        labmate.log("overshoot_pct", overshoot, t=t)
        print(f"t={t:.2f} temperature={temp:.4f} power={u:.3f}")
        time.sleep(0.012)
print(f"settled at {temp:.3f} C, overshoot {overshoot:.2f} %")
