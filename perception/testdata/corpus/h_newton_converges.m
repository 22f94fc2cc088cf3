% label: healthy
% fault: none
% watch: finite(x)
% runtime: 3
% what: Newton's method on x^3 - 2x - c for four values of c; each converges quadratically and the converged root is printed again during a few polishing steps (unchanged value is legitimate here).
fn = @(x, c) x.^3 - 2 * x - c;
dfn = @(x) 3 * x.^2 - 2;
for c = [5 6 7 8]
  x = 2;
  printf('solving x^3 - 2x - %d = 0 from x0 = %g\n', c, x);
  it = 0;
  while true
    dx = fn(x, c) / dfn(x);
    x = x - dx;
    it = it + 1;
    labmate_log('x', x);
    printf('  iter %d  x = %.16f  |f| = %.3e\n', it, x, abs(fn(x, c)));
    pause(0.08);
    if abs(dx) < 1e-14 * abs(x)
      break;
    end
  end
  for polish = 1:3
    x = x - fn(x, c) / dfn(x);
    printf('  polish %d  root = %.16f\n', polish, x);
    pause(0.08);
  end
end
printf('done\n');
