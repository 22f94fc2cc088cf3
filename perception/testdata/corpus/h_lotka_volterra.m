% label: healthy
% fault: none
% watch: prey in [0.1, 10]
% watch: predator in [0.1, 10]
% runtime: 4
% what: Lotka-Volterra predator-prey cycles integrated with ode45 (tight tolerances) in windows: a large, steady (closed-orbit) oscillation whose conserved quantity stays fixed, not a growing one.
a = 1.0; b = 0.5; c = 0.75; d = 0.25;
rhs = @(t, z) [a * z(1) - b * z(1) * z(2); -c * z(2) + d * z(1) * z(2)];
V = @(z) d * z(1) - c * log(z(1)) + b * z(2) - a * log(z(2));
opts = odeset('RelTol', 1e-9, 'AbsTol', 1e-11);
z = [5; 1];
V0 = V(z);
for k = 1:120
  [tt, zz] = ode45(rhs, [(k - 1) * 0.4, k * 0.4], z, opts);
  z = zz(end, :)';
  t = tt(end);
  labmate_log('prey', z(1), t);
  labmate_log('predator', z(2), t);
  printf('t=%.1f prey=%.5f predator=%.5f invariant_drift=%.2e\n', t, z(1), z(2), V(z) - V0);
  pause(0.02);
end
printf('orbit closed; invariant drift %.2e\n', V(z) - V0);
