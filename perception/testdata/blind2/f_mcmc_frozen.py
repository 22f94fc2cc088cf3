# label: faulty
# fault: stagnation
# runtime: 15
# what: random-walk Metropolis for the two-parameter logistic dose-response model of the bioassay data (deaths out of 5 at 4 log-doses), printed as CSV rows iter,alpha,beta,loglik,ld50 every 5 iterations: after a 300-iteration burn-in the proposal is 'adapted' from the burn-in covariance, which includes the walk in from a careless start (25, -40) and uses the wrong units; the proposal is then so wide that nothing is ever accepted again and the chain prints the identical sample for the remaining 1200 iterations.
import time

import numpy as np

rng = np.random.default_rng(11)
# dose-response (bioassay) data: deaths out of 5 animals at 4 log-doses (Racine et al. 1986)
logdose = np.array([-0.86, -0.30, -0.05, 0.73])
nanim = np.array([5, 5, 5, 5])
deaths = np.array([0, 1, 3, 5])


def loglik(th):
    a, b = th
    eta = a + b * logdose
    return np.sum(deaths * eta - nanim * np.logaddexp(0.0, eta)) - 0.5 * (a**2 + b**2) / 100.0


print("iter,alpha,beta,loglik,ld50", flush=True)
th = np.array([25.0, -40.0])          # a careless start, far in the tail
lp = loglik(th)
scale = np.array([1.0, 3.0])
burn, total = 300, 1500
hist = []
acc = 0
for it in range(1, total + 1):
    if it == burn + 1:
        # adapt: proposal from the sample covariance of the burn-in (2.38^2/d rule); the burn-in
        # includes the walk in from the careless start, in the wrong units (variance for std)
        C = np.cov(np.array(hist).T)
        scale = 2.38**2 / 2 * np.sqrt(np.diag(C)) * 40.0
        labmate.log('onset', 1)
    prop = th + scale * rng.normal(0, 1, 2)
    lpp = loglik(prop)
    if np.log(rng.uniform()) < lpp - lp:
        th, lp = prop, lpp
        acc += 1
    hist.append(th.copy())
    if it % 5 == 0:
        print(f"{it},{th[0]:.5f},{th[1]:.5f},{lp:.5f},{-th[0] / th[1]:.5f}", flush=True)
        time.sleep(0.04)
