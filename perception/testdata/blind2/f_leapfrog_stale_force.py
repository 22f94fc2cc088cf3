# label: faulty
# fault: drift
# runtime: 15
# what: FPU-beta chain of 32 atoms with fixed ends, thermal start: velocity Verlet conserves KE+PE to 1e-5 for 1500 steps (reference run, Fortran D-format table), then an 'optimised' version that calls the force routine once per step reuses the forces of the old positions in the second half-kick; the scheme is no longer symplectic and the total energy KE+PE, which must be conserved, climbs steadily from the first steps: 3.87 -> 4.35 after 900 steps, 5.7 after 2700, 10.2 after 5700; nothing jumps.
import time

import numpy as np

N, beta, dt = 32, 1.0, 0.01
rng = np.random.default_rng(7)


def forces(x):
    d = np.diff(np.concatenate(([0.0], x, [0.0])))     # bond stretches, fixed ends
    fb = d + beta * d**3
    return fb[1:] - fb[:-1]


def energies(x, v):
    d = np.diff(np.concatenate(([0.0], x, [0.0])))
    return 0.5 * np.sum(v**2), np.sum(0.5 * d**2 + 0.25 * beta * d**4)


def D(v):
    return f"{v: .5e}".replace("e", "D")


def table_header(title):
    print(title)
    print("    STEP        TIME              KE              PE           KE+PE", flush=True)


x0 = np.zeros(N)
v0 = rng.normal(0.0, 0.6, N)
v0 -= v0.mean()

# reference run: velocity Verlet, forces recomputed after the drift
table_header(" FPU-beta chain, N = 32, velocity Verlet, dt = 0.01")
x, v = x0.copy(), v0.copy()
E0 = sum(energies(x, v))
band = 0.0                      # largest |E - E0| / E0 of the correct integrator
f = forces(x)
for step in range(1, 1501):
    v += 0.5 * dt * f
    x += dt * v
    f = forces(x)
    v += 0.5 * dt * f
    ke, pe = energies(x, v)
    band = max(band, abs(ke + pe - E0) / E0)
    if step % 50 == 0:
        print(f"{step:8d} {D(step * dt)} {D(ke)} {D(pe)} {D(ke + pe)}", flush=True)
        time.sleep(0.1)

# "optimised" run: one force call per step instead of two -- but the second half-kick
# now reuses the forces of the OLD positions
table_header(" FPU-beta chain, N = 32, velocity Verlet (one force call per step), dt = 0.01")
x, v = x0.copy(), v0.copy()
logged = False
for step in range(1, 6001):
    f = forces(x)
    v += 0.5 * dt * f
    x += dt * v
    v += 0.5 * dt * f
    ke, pe = energies(x, v)
    if not logged and abs(ke + pe - E0) / E0 > band:
        labmate.log('onset', 1)     # the energy leaves the band the correct integrator stayed in
        logged = True
    if step % 60 == 0:
        print(f"{step:8d} {D(step * dt)} {D(ke)} {D(pe)} {D(ke + pe)}", flush=True)
        time.sleep(0.1)
