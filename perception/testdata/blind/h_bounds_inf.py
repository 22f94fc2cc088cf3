# label: healthy
# fault: none
# runtime: 2
# what: branch and bound for a 0/1 knapsack (30 items, strongly correlated: value = weight + 10), printing the incumbent and the bound after every batch of nodes: it starts from incumbent = -inf and gap = inf (no feasible solution yet), then the incumbent rises, the upper bound falls and the gap closes to 0; printed infinities at the start are normal.
import time
import heapq
import numpy as np

rng = np.random.default_rng(17)
n = 30
w = rng.integers(10, 60, n).astype(float)
v = w + 10.0
cap = 0.4 * w.sum()
order = np.argsort(-v / w)
w, v = w[order], v[order]


def bound(i, cw, cv):
    b = cv
    while i < n and cw + w[i] <= cap:
        cw += w[i]
        b += v[i]
        i += 1
    if i < n:
        b += (cap - cw) * v[i] / w[i]
    return b


best = -np.inf
print(f"batch 0: incumbent = {best}, upper bound = {np.inf}, gap = {np.inf}", flush=True)
heap = [(-bound(0, 0.0, 0.0), 0, 0.0, 0.0)]
nodes, batch = 0, 0
while heap:
    nb, i, cw, cv = heapq.heappop(heap)
    nodes += 1
    if -nb > best and i < n:
        if cw + w[i] <= cap:
            nv = cv + v[i]
            if nv > best and i + 1 <= n:
                best = max(best, nv)
            heapq.heappush(heap, (-bound(i + 1, cw + w[i], nv), i + 1, cw + w[i], nv))
        heapq.heappush(heap, (-bound(i + 1, cw, cv), i + 1, cw, cv))
    if nodes % 300 == 0:
        batch += 1
        ub = max(best, -heap[0][0]) if heap else best
        gap = (ub - best) / abs(best) if np.isfinite(best) else np.inf
        print(f"batch {batch}: nodes = {nodes}, incumbent = {best}, upper bound = {ub:.2f}, gap = {gap:.4f}", flush=True)
        time.sleep(0.03)
print(f"optimal value = {best}, nodes explored = {nodes}", flush=True)
