% label: faulty
% fault: divergence
% watch: finite(B)
% runtime: 26
% what: linear stiff kinetics A -> B (k = 1000/s) -> C (k = 1/s) integrated with explicit Euler at dt = 0.01, far above the 2/1000 stability limit: the fast mode is amplified 9x per step, overflows to Inf and then NaN.
k1 = 1000; k2 = 1;
J = [-k1 0 0; k1 -k2 0; 0 k2 0];
lam = eig(J);
printf('eigenvalues of the kinetics Jacobian: %s\n', mat2str(sort(lam)', 4));
printf('stiffness ratio %.0f; explicit Euler is stable only for dt < %.4g\n', k1 / k2, 2 / k1);
pause(0.3);
dt = 0.01;                      % chosen from the slow time scale: far too big for the fast one
printf('integrating with dt = %g\n', dt);
y = [1; 0; 0];
for n = 1:500
  if n == 1
    labmate_log('onset', 1);    % the first unstable step
  end
  y = y + dt * (J * y);
  t = n * dt;
  labmate_log('B', y(2), t);
  printf('step %d t=%.2f A=%.6e B=%.6e C=%.6e\n', n, t, y(1), y(2), y(3));
  pause(0.05);
end
printf('done: final B = %g\n', y(2));
