% label: healthy
% fault: none
% watch: finite(y2)
% watch: mass_error < 1e-6
% runtime: 3
% what: Robertson's stiff chemical kinetics (rates 0.04, 3e7, 1e4) solved with the implicit ode15s over t in [0, 4e5] in logarithmic windows; concentrations stay in [0, 1] and mass is conserved.
rhs = @(t, y) [-0.04 * y(1) + 1e4 * y(2) * y(3);
                0.04 * y(1) - 1e4 * y(2) * y(3) - 3e7 * y(2)^2;
                3e7 * y(2)^2];
opts = odeset('RelTol', 1e-6, 'AbsTol', [1e-8 1e-12 1e-8]);
y = [1; 0; 0];
edges = [0 logspace(-5, 5.6, 40)];
for i = 1:numel(edges) - 1
  [tt, yy] = ode15s(rhs, [edges(i) edges(i+1)], y, opts);
  y = yy(end, :)';
  t = tt(end);
  merr = abs(sum(y) - 1);
  labmate_log('y2', y(2), t);
  labmate_log('mass_error', merr, t);
  printf('t=%.4e y1=%.6f y2=%.4e y3=%.6f steps=%d\n', t, y(1), y(2), y(3), numel(tt) - 1);
  pause(0.05);
end
printf('final state y1=%.6f y2=%.3e y3=%.6f\n', y(1), y(2), y(3));
