# label: faulty
# fault: drift
# runtime: 13
# what: a degradable tracer injected continuously into a 12 km river reach, first-order upwind finite volumes, with a mass balance printed every 0.25 h (key [unit]=value fields): on the uniform grid the imbalance M - (M_in - M_out - M_dec) stays at 0.0000 kg, but the refined grid (50 m cells around an outfall) divides the fluxes by the coarse cell width everywhere, so the scheme is not conservative: once the tracer reaches the refined cells mass disappears and the imbalance grows steadily, to -13.6 kg (-27% of what came in) by t = 9 h.
import time

import numpy as np

# tracer (a degradable dye, k = 0.3 /h) injected continuously at the upstream end of a 12 km river
# reach, first-order upwind finite volumes, mass balance checked every 0.25 h of simulated time
u, k, L, c_in = 3.0, 0.3, 12.0, 2.0          # km/h, 1/h, km, kg/km at the inlet
dt = 0.01


def run(dx_cells, label, buggy, T_end):
    n = dx_cells.size
    dx_scalar = dx_cells[0]
    c = np.zeros(n)
    m_in = m_out = m_dec = 0.0
    print(f"== {label}: {n} cells, dx from {dx_cells.min():.3f} to {dx_cells.max():.3f} km, dt = {dt} h ==", flush=True)
    nsteps = int(round(T_end / dt))
    logged = False
    for s in range(1, nsteps + 1):
        F = u * np.concatenate(([c_in], c))          # upwind fluxes at the n+1 faces
        dxe = dx_scalar if buggy else dx_cells       # the refined run forgot that dx varies
        m_dec += dt * k * np.sum(c * dx_cells)
        c = c + dt * (F[:-1] - F[1:]) / dxe - dt * k * c
        m_in += dt * F[0]
        m_out += dt * F[-1]
        if buggy and not logged:
            imb = np.sum(c * dx_cells) - (m_in - m_out - m_dec)
            if abs(imb) >= 5e-5:            # the imbalance shows in the printed 4th decimal (kg)
                labmate.log('onset', 1)
                logged = True
        if s % 25 == 0:
            M = np.sum(c * dx_cells)
            imb = M - (m_in - m_out - m_dec)
            print(f"t={s * dt:5.2f} h | M_in [kg]={m_in:8.4f} | M [kg]={M:8.4f} | M_out [kg]={m_out:8.4f} "
                  f"| M_dec [kg]={m_dec:8.4f} | imbalance [kg]={imb:+.4f} | imbalance [%]={100 * imb / m_in:+.4f}",
                  flush=True)
            time.sleep(0.2)


run(np.full(60, L / 60), "uniform grid", False, 5.0)
# refined grid around the outfall at km 5-7 (cells of 50 m instead of 200 m)
dx = np.concatenate((np.full(25, 0.2), np.full(40, 0.05), np.full(25, 0.2)))
run(dx, "refined near the outfall", True, 9.0)
