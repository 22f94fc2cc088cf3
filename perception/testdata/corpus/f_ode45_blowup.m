% label: faulty
% fault: solver
% runtime: 25
% what: parameter sweep of y' = c*y^2, y(0) = 1 on [0, 3.5] with ode45; the solution blows up at t = 1/c, so from c = 0.3 on every solve ends with "warning: Solving was not successful ... stepsize becomes too small" and garbage end values, yet the sweep goes on.
cs = 0.05:0.05:3.0;
announced = false;
for i = 1:numel(cs)
  c = cs(i);
  if ~announced && 1 / c < 3.5
    labmate_log('onset', 1);          % the first solve that runs into the singularity
    announced = true;
  end
  [t, y] = ode45(@(t, y) c * y.^2, [0 3.5], 1);
  labmate_log('y_end', y(end), c);
  printf('c=%.2f reached t=%.6f y_end=%.6g steps=%d\n', c, t(end), y(end), numel(t));
  pause(0.35);
end
printf('sweep done\n');
