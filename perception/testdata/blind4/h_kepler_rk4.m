% label: healthy
% fault: none
% runtime: 9
% what: a Kepler orbit (e = 0.6) integrated with classical RK4 and scalar state variables in a `while t < t_end` loop over 28 periods (336,000 steps, about 8 s of busy silence, no arrays); then the relative energy and angular-momentum drifts (~1e-13) and the return to perihelion.
% Planet on an eccentric Kepler orbit (GM = 1, e = 0.6, a = 1, period 2 pi), integrated with classical
% RK4 and scalar state variables up to t_end; then the drift of the energy and angular momentum,
% which the exact orbit conserves, and the position after a whole number of periods.
e = 0.6;
x = 1 - e; y = 0; vx = 0; vy = sqrt((1 + e) / (1 - e));
E0 = 0.5 * (vx^2 + vy^2) - 1 / sqrt(x^2 + y^2);
L0 = x * vy - y * vx;
norbits = 28;
t_end = 2 * pi * norbits;
nsteps = 12000 * norbits;
dt = t_end / nsteps;
printf('RK4 for the Kepler orbit (e = %.1f) over %d periods, dt = %.3e ...\n', e, norbits, dt);
fflush(stdout);
t = 0;
while t < t_end - 0.5 * dt
  r3 = (x^2 + y^2)^1.5;
  k1x = vx; k1y = vy; k1u = -x / r3; k1v = -y / r3;
  x2 = x + 0.5 * dt * k1x; y2 = y + 0.5 * dt * k1y;
  r3 = (x2^2 + y2^2)^1.5;
  k2x = vx + 0.5 * dt * k1u; k2y = vy + 0.5 * dt * k1v; k2u = -x2 / r3; k2v = -y2 / r3;
  x3 = x + 0.5 * dt * k2x; y3 = y + 0.5 * dt * k2y;
  r3 = (x3^2 + y3^2)^1.5;
  k3x = vx + 0.5 * dt * k2u; k3y = vy + 0.5 * dt * k2v; k3u = -x3 / r3; k3v = -y3 / r3;
  x4 = x + dt * k3x; y4 = y + dt * k3y;
  r3 = (x4^2 + y4^2)^1.5;
  k4x = vx + dt * k3u; k4y = vy + dt * k3v; k4u = -x4 / r3; k4v = -y4 / r3;
  x = x + dt / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
  y = y + dt / 6 * (k1y + 2 * k2y + 2 * k3y + k4y);
  vx = vx + dt / 6 * (k1u + 2 * k2u + 2 * k3u + k4u);
  vy = vy + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
  t = t + dt;
end
E = 0.5 * (vx^2 + vy^2) - 1 / sqrt(x^2 + y^2);
L = x * vy - y * vx;
printf('t = %.6f: relative energy drift %.2e, angular momentum drift %.2e, back at perihelion to %.2e\n', ...
       t, abs(E - E0) / abs(E0), abs(L - L0) / abs(L0), hypot(x - (1 - e), y));
