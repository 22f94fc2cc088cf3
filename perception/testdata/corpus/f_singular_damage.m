% label: faulty
% fault: singular
% watch: finite(tip)
% runtime: 24
% what: quasi-static damage of a chain of 10 springs under a growing tip load; when the weakest spring breaks (k = 0) the stiffness matrix becomes singular and every later load step solves K\f with "warning: matrix singular to machine precision" and meaningless displacements.
nspr = 10;
k = 1000 * ones(nspr, 1);
strength = [60 55 48 52 58 62 57 53 59 61];     % force at which each spring breaks
broken = false(nspr, 1);
announced = false;
for step = 1:300
  P = 1.0 * step;                               % tip load grows 1 N per step
  % assemble the stiffness of the fixed-free chain: node 0 fixed, nodes 1..10 free
  K = zeros(nspr);
  for i = 1:nspr
    ki = k(i) * ~broken(i);
    K(i, i) = K(i, i) + ki;
    if i > 1
      K(i-1, i-1) = K(i-1, i-1) + ki;
      K(i-1, i) = K(i-1, i) - ki;
      K(i, i-1) = K(i, i-1) - ki;
    end
  end
  f = zeros(nspr, 1); f(end) = P;
  if ~announced && any(broken)
    labmate_log('onset', 1);                    % first solve with a singular stiffness matrix
    announced = true;
  end
  u = K \ f;
  force = k .* diff([0; u]) .* ~broken;         % spring forces
  newly = ~broken & (force > strength(:));
  if any(newly)
    printf('step %d: spring %d breaks at force %.1f\n', step, find(newly, 1), max(force(newly)));
    broken = broken | newly;
  end
  labmate_log('tip', u(end), step);
  printf('step %d load=%.1f tip=%.6g max_force=%.6g\n', step, P, u(end), max(force));
  pause(0.08);
end
