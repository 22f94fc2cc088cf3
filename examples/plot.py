"""A damped oscillator's energy, plotted and tabulated: the figure (energy.png) and the table
(energy.csv) are the cell's artifacts, kept in the data directory's artifact store."""
import math

import matplotlib.pyplot as plt

t = [i * 0.05 for i in range(101)]
E = [0.5 * math.exp(-0.6 * x) * (1 + 0.1 * math.cos(4 * x)) for x in t]
with open("energy.csv", "w") as f:
    f.write("t,E\n")
    for x, e in zip(t, E):
        f.write(f"{x:.2f},{e:.6f}\n")
plt.plot(t, E)
plt.xlabel("t")
plt.ylabel("E")
plt.savefig("energy.png")
print(f"E(0) = {E[0]:.3f}, E(5) = {E[-1]:.3f}")
