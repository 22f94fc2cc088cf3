# label: faulty
# fault: oscillation
# watch: finite(level)
# runtime: 16
# what: digital PID level control of a tank (two lags 2 s and 0.3 s, 0.25 s transport delay); at t = 5 s an operator retune (Kp 2 -> 22) and a setpoint change make the loop unstable: the level oscillates with an envelope growing ~1.8x every half period.
import time
from collections import deque

dt = 1e-3
tau1, tau2, delay = 2.0, 0.3, 0.25
pipe = deque([0.0] * int(round(delay / dt)))
x1 = x2 = 0.0
integ = 0.0
eprev = None
Kp, Ki, Kd, r = 2.0, 0.8, 0.5, 1.0
retuned = False
for n in range(1, int(80 / dt) + 1):
    t = n * dt
    if not retuned and t >= 5.0:
        Kp, Ki, Kd, r = 22.0, 6.0, 0.2, 0.6
        retuned = True
        print(f"t={t:.2f} operator retune: Kp={Kp} Ki={Ki} Kd={Kd}, setpoint {r}")
        labmate.log("onset", 1)
    level = x2
    e = r - level
    integ += e * dt
    deriv = 0.0 if eprev is None else (e - eprev) / dt
    eprev = e
    u = Kp * e + Ki * integ + Kd * deriv
    pipe.append(u)
    ud = pipe.popleft()
    x1 += dt * (-x1 + ud) / tau1
    x2 += dt * (-x2 + x1) / tau2
    if n % 50 == 0:
        labmate.log("level", level, t=t)
        print(f"t={t:.2f} level={level:.6g} valve={u:.6g}")
        time.sleep(0.01)
print(f"final level {level:.4g}")
