# label: healthy
# fault: none
# watch: temperature in [18, 24]
# runtime: 3
# what: a thermostat simulation logged as CSV (a header line, then one row every simulated minute): room temperature held at 21 C with sensor noise, heater duty cycling between 0 and 1, energy use growing linearly; noisy but stationary series, read as a table.
import time
import numpy as np

rng = np.random.default_rng(3)
T, energy = 19.0, 0.0
print("minute,temperature,setpoint,heater,energy_kwh", flush=True)
for minute in range(1, 91):
    heater = 1.0 if T < 21 else 0.0
    T += 0.5 * heater - 0.05 * (T - 12) * 0.5 + rng.normal(0, 0.05)
    energy += heater * 2.0 / 60
    print(f"{minute},{T + rng.normal(0, 0.1):.3f},21.0,{heater:.0f},{energy:.4f}", flush=True)
    time.sleep(0.025)
print("done")
