"""Logistic growth, integrated with classical Runge-Kutta: prints the population every half
unit of time (plain Python, so it runs wherever the Python kernel does)."""
r, K = 1.5, 100.0


def f(N):
    return r * N * (1 - N / K)


N, dt = 5.0, 0.01
for step in range(1, 501):
    k1 = f(N)
    k2 = f(N + dt / 2 * k1)
    k3 = f(N + dt / 2 * k2)
    k4 = f(N + dt * k3)
    N += dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    if step % 50 == 0:
        print(f"t={step * dt:.1f} N={N:.3f}")
print(f"final population {N:.3f} of {K:g}")
