% label: faulty
% fault: divergence
% watch: finite(x)
% runtime: 26
% what: Newton's method for atan(x) = 0: from x0 = 1.2 it converges, but from x0 = 1.5 (outside |x0| < 1.39) the iterates alternate in sign and explode to Inf and then NaN; the stopping test |dx| < tol*|x| is never true, so it runs to the iteration cap.
f = @(x) atan(x);
df = @(x) 1 ./ (1 + x.^2);
for x0 = [1.2 1.5]
  x = x0;
  printf('Newton for atan(x) = 0 from x0 = %.2f\n', x0);
  if x0 == 1.5
    labmate_log('onset', 1);      % the diverging solve starts
  end
  for it = 1:250
    dx = f(x) / df(x);
    x = x - dx;
    labmate_log('x', x);
    printf('  iter %d  x = %.10g  |dx| = %.3g\n', it, x, abs(dx));
    pause(0.1);
    if abs(dx) < 1e-12 * max(1, abs(x))
      printf('  converged to %.3g\n', x);
      break;
    end
  end
end
