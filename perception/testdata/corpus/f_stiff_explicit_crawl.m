% label: faulty
% fault: stagnation
% runtime: 25
% what: a first-order relaxation with a time-dependent rate, y' = -k(t) (y - y_eq(t)), integrated with a hand-written adaptive Bogacki-Shampine (explicit RK3(2)) stepper; at t = 2 ms the rate jumps from 5/s to 1e8/s and the problem turns stiff: as its stages reach past 2 ms the step collapses from 1e-4 to its stability limit near 1e-8, each progress line (t = …, step = …, nfev = …) advances t by a few microseconds, and only the 25 s wall-clock guard ends the run.
k = @(t) 5 + (t >= 2e-3) * 1e8;
f = @(t, y) -k(t) * (y - (0.5 + 0.1 * sin(100 * t)));
t = 0; y = 1; h = 1e-6; nfev = 0; n = 0; tol = 1e-7; t_out = 0; onset = false;
tic;
while t < 0.1 && toc < 25
  k1 = f(t, y); k2 = f(t + h/2, y + h/2*k1); k3 = f(t + 3*h/4, y + 3*h/4*k2);
  y3 = y + h * (2*k1 + 3*k2 + 4*k3) / 9;
  k4 = f(t + h, y3);
  y2 = y + h * (7*k1/24 + k2/4 + k3/3 + k4/8);
  nfev = nfev + 4;
  err = abs(y3 - y2);
  if err <= tol
    t = t + h; y = y3; n = n + 1;
    if ~onset && t > 1e-4 && h < 1e-6
      labmate_log('onset', 1);   % the step has collapsed: crawling from here on
      onset = true;
    end
    if mod(n, 200) == 0 || t >= t_out
      printf('t = %.6e step = %.3e nfev = %d\n', t, h, nfev);
      t_out = t + 1e-4;
    end
  end
  h = min(1e-4, 0.9 * h * (tol / max(err, 1e-30))^(1/3));
end
printf('stopped at t = %.6e after %d steps (%d evaluations)\n', t, n, nfev);
