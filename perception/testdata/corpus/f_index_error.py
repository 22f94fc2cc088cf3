# label: faulty
# fault: error
# runtime: 3
# what: 1-D cellular automaton / particle hopping on a ring buffer implemented with explicit neighbour indices; the update reads cells[i + 1] without wrapping, and when the front reaches the last cell an IndexError ends the run mid-simulation.
import time
import numpy as np

n = 60
cells = np.zeros(n)
cells[5] = 1.0
front = 5
for step in range(1, 200):
    new = cells.copy()
    for i in range(1, front + 1):
        if i + 1 == n:
            labmate.log("onset", 1)          # the next read is past the end of the array
        new[i] = 0.25 * cells[i - 1] + 0.5 * cells[i] + 0.25 * cells[i + 1]
    front += 1
    cells = new / new.sum()
    centre = float((np.arange(n) * cells).sum())
    labmate.log("centre", centre, t=step)
    print(f"step {step} front={front} centre={centre:.4f} spread={np.sqrt(((np.arange(n) - centre) ** 2 * cells).sum()):.4f}")
    time.sleep(0.05)
