# label: faulty
# fault: constraint
# watch: temperature < 400
# runtime: 20
# what: jacketed reactor driven through a setpoint campaign by an aggressive PI loop (Kp=6, Ki=3) through two thermal lags; the loop is stable but overshoots ~33%: harmless on the first step to 340 K, then the step to 395 K peaks near 413 K, violating the watched 400 K limit, and later steps do it again.
import time

Kp, Ki = 6.0, 3.0
tau1, tau2 = 1.5, 0.8
T0 = 300.0
dt = 1e-3
x1 = x2 = 0.0
integ = 0.0
announced = False
n = 0
for setpoint in (340.0, 395.0, 330.0, 390.0, 350.0, 385.0):
    print(f"setpoint -> {setpoint} K")
    for k in range(8000):
        n += 1
        temp = T0 + x2
        e = (setpoint - T0) - x2
        integ += e * dt
        u = Kp * e + Ki * integ
        x1 += dt * (-x1 + u) / tau1
        x2 += dt * (-x2 + x1) / tau2
        if k % 50 == 49:
            t = n * dt
            shown = round(temp, 3)
            if not announced and shown >= 400:
                labmate.log("onset", 1)      # first report over the limit
                announced = True
            labmate.log("temperature", temp, t=t)
            print(f"t={t:.2f} temperature={shown:.3f} heating={u:.3f}")
            time.sleep(0.02)
print("campaign finished")
