% label: healthy
% fault: none
% runtime: 13
% what: full GMRES (own Arnoldi loop) on upwind convection-diffusion with cell Peclet number 275 (90 unknowns): the residual creeps down only like sqrt(1 - k/n) (0.99, 0.95, 0.83, 0.68, 0.50, 0.28, 0.15 of its start after 1, 8, 28, 48, 68, 83, 88 iterations: still 15% of its start after 88 of 90 iterations), then falls by 12 decades in the last two iterations, as GMRES must on such a non-normal operator; converged with true residual 1e-12.
% steady convection-diffusion -eps u'' + u' = 1 on (0,1), u(0) = u(1) = 0, upwind differences,
% cell Peclet number 275: solved by full (unrestarted) GMRES, written out with its Arnoldi loop
n = 90; hh = 1 / (n + 1); ep = 1e-4 / 5;
A = spdiags([(-ep / hh^2 - 1 / hh) * ones(n, 1), (2 * ep / hh^2 + 1 / hh) * ones(n, 1), (-ep / hh^2) * ones(n, 1)], ...
            [-1 0 1], n, n);
b = ones(n, 1);
beta0 = norm(b);
V = zeros(n, n + 1); H = zeros(n + 1, n);
V(:, 1) = b / beta0;
printf('GMRES (no restart), n = %d, cell Peclet = %.0f, tol = 1e-10\n', n, hh / (2 * ep));
printf('  iter        resid   resid/resid0\n');
for j = 1:n
  w = A * V(:, j);
  for i = 1:j
    H(i, j) = V(:, i)' * w;
    w = w - H(i, j) * V(:, i);
  end
  H(j + 1, j) = norm(w);
  if H(j + 1, j) > 0
    V(:, j + 1) = w / H(j + 1, j);
  end
  e1 = zeros(j + 1, 1); e1(1) = beta0;
  y = H(1:j + 1, 1:j) \ e1;
  res = norm(e1 - H(1:j + 1, 1:j) * y);
  printf('%6d  %11.4e  %13.4e\n', j, res, res / beta0);
  fflush(stdout);
  pause(0.1);
  if res / beta0 < 1e-10
    break
  end
end
x = V(:, 1:j) * y;
printf('converged after %d iterations, true residual %.3e, max u = %.6f\n', j, norm(b - A * x), max(x));
