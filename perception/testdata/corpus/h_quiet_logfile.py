# label: healthy
# fault: none
# follow: run.log
# perception: silence=1500ms
# perception: silence_error=3s
# runtime: 4
# what: a quiet job writing to a file: a Monte Carlo estimate of the Ising magnetisation (32x32 lattice, Metropolis) that writes its progress to run.log instead of printing it, busy and silent on stdout for about 5 s (700 sweeps); the run follows run.log (--follow) and declares short silence limits (an Error after 3 s), and the log's lines show it progressing.
import numpy as np

rng = np.random.default_rng(5)
L, beta = 32, 0.3
s = rng.choice([-1, 1], size=(L, L))
print("Ising Monte Carlo running; progress in run.log", flush=True)
with open("run.log", "w", buffering=1) as log:
    for sweep in range(1, 701):
        for _ in range(L * L // 4):
            i, j = rng.integers(0, L, size=2)
            dE = 2 * s[i, j] * (s[(i + 1) % L, j] + s[i - 1, j] + s[i, (j + 1) % L] + s[i, j - 1])
            if dE <= 0 or rng.random() < np.exp(-beta * dE):
                s[i, j] = -s[i, j]
        log.write(f"sweep = {sweep} magnetisation = {abs(s.mean()):.4f}\n")
print(f"done: |m| = {abs(s.mean()):.4f}")
