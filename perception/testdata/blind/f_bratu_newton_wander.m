% label: faulty
% fault: stagnation
% runtime: 15
% what: Newton's method for the steady temperature of a self-heating slab (the Frank-Kamenetskii / Bratu problem -u'' = lambda exp(u), u(0) = u(1) = 0, 60 nodes): for lambda = 2 it converges in a few iterations, but lambda = 4 is beyond the critical value 3.51 where no steady state exists (thermal runaway); Newton then never converges: the residual |r| wanders up and down, mostly between 1 and 20 with excursions to 5e2 and, near the end, 1e6, for 90 iterations, with no downward trend, while the solver keeps going.
n = 60; h = 1 / (n + 1);
e = ones(n, 1);
A = spdiags([-e 2*e -e], -1:1, n, n) / h^2;
for lambda = [2 4]
  u = zeros(n, 1);
  printf('--- Newton for the Bratu problem, lambda = %g\n', lambda);
  if lambda > 3.51
    labmate_log('onset', 1);
  end
  for it = 1:90
    F = A * u - lambda * exp(u);
    r = norm(F) * sqrt(h);
    printf('iter %3d   |r| = %.4e   max(u) = %.4f\n', it, r, max(u));
    fflush(stdout);
    pause(0.1);
    if r < 1e-10
      printf('converged in %d iterations\n', it);
      break;
    end
    J = A - lambda * spdiags(exp(u), 0, n, n);
    u = u - J \ F;
  end
end
