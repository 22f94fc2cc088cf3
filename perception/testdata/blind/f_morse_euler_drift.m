% label: faulty
% fault: drift
% runtime: 15
% what: vibration of a diatomic molecule on a Morse potential (reduced units, D = 1, a = 1, starting at 20% of the dissociation energy) integrated with explicit (forward) Euler at 1/500 of the period: the printed total energy E_tot, which must be conserved, climbs steadily period after period (+25% after 4 periods, +120% after 13), so the molecule gradually heats toward dissociation; the bond length oscillates normally throughout and nothing jumps.
D = 1.0; a = 1.0; m = 1.0; re = 1.0;
V = @(r) D * (1 - exp(-a * (r - re))).^2;
F = @(r) -2 * D * a * (1 - exp(-a * (r - re))) .* exp(-a * (r - re));
r = re - log(1 - sqrt(0.2)) / a; v = 0;
E0 = V(r);
T = 2 * pi / sqrt(2 * D * a^2 / m);
dt = 0.002 * T;
printf('Morse oscillator, forward Euler, dt = %.4f (period %.4f)\n', dt, T);
printf('%6s %9s %9s %10s\n', 'step', 't', 'r', 'E_tot');
labmate_log('onset', 1);
for n = 1:6000
  acc = F(r) / m;
  r = r + dt * v;
  v = v + dt * acc;
  if mod(n, 50) == 0
    Et = 0.5 * m * v^2 + V(r);
    printf('%6d %9.3f %9.4f  E_tot = %.6f\n', n, n * dt, r, Et);
    fflush(stdout);
    pause(0.08);
  end
end
