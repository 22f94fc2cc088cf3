% label: faulty
% fault: stagnation
% runtime: 15
% what: Newton's method from x = 0 for the real roots of the characteristic cubics of five linearised reaction networks, printed in Fortran D-format: systems 1-3 converge (system 2 after a long wandering start), but for x^3 - 2x + 2 Newton falls into the superattracting 2-cycle 0 -> 1 -> 0: x alternates exactly between 1 and 0 and P(X) between 1 and 2 for 80 iterations with |DX| = 1, then 'NO CONVERGENCE', and system 5 converges.
% real roots of the characteristic cubics p(x) = x^3 + c2 x^2 + c1 x + c0 of a batch of 3x3
% linearised reaction networks, by Newton's method started at x = 0 (tol 1e-12, up to 80 steps)
C = [1.0 -4.0 1.0;      % c2 c1 c0
     0.5 -1.0 -3.0;
     3.0  3.0  2.0;
     0.0 -2.0  2.0;
     2.0 -1.0 -1.5];
for j = 1:rows(C)
  c = C(j, :);
  p  = @(x) x.^3 + c(1) * x.^2 + c(2) * x + c(3);
  dp = @(x) 3 * x.^2 + 2 * c(1) * x + c(2);
  printf(' SYSTEM %d   C2=%s C1=%s C0=%s\n', j, strrep(sprintf('%10.3E', c(1)), 'E', 'D'), ...
         strrep(sprintf('%10.3E', c(2)), 'E', 'D'), strrep(sprintf('%10.3E', c(3)), 'E', 'D'));
  printf('   ITER           X             P(X)           |DX|\n');
  x = 0.0; xs = [];
  for it = 1:80
    dx = -p(x) / dp(x);
    x = x + dx;
    if abs(dx) > 1e-6 && any(abs(x - [0 xs]) < 1e-9) && ~exist('logged', 'var')   % back to an earlier iterate
      labmate_log('onset', 1); logged = true;
    end
    xs(end+1) = x;
    fx = p(x);
    s = sprintf('%6d  %15.8E  %15.8E  %13.6E', it, x, fx, abs(dx));
    printf('%s\n', strrep(s, 'E', 'D'));
    fflush(stdout);
    pause(0.1);
    if abs(fx) < 1e-12
      printf('   CONVERGED, ROOT = %s\n', strrep(sprintf('%18.11E', x), 'E', 'D'));
      break
    end
  end
  if abs(fx) >= 1e-12
    printf('   NO CONVERGENCE AFTER %d ITERATIONS\n', it);
  end
end
