# label: faulty
# fault: memory
# runtime: 4
# what: a particle simulation that appends a full snapshot of its state to a history list and refines its 2-D particle lattice by 2x per direction (4x the particles) every level; memory quadruples per level until numpy raises MemoryError (_ArrayMemoryError: Unable to allocate ...).
import time
import numpy as np

rng = np.random.default_rng(0)
history = []
n = 1 << 21                                  # 2 Mi particles x 3 coordinates (48 MB)
labmate.log("onset", 1)                      # the unbounded growth starts with the first level
for level in range(40):
    pos = np.empty((n, 3))
    pos[:] = rng.random(3)                   # touch every page (cheap fill)
    pos[:, 0] += np.linspace(0.0, 1.0, n)
    history.append(pos)                      # the leak: every level's snapshot is retained
    held = sum(a.nbytes for a in history) / 2 ** 20
    labmate.log("history_mb", held)
    print(f"level {level}: particles={n} centroid_x={pos[:, 0].mean():.6f} history={held:.0f} MB")
    n *= 4
    time.sleep(0.2)
