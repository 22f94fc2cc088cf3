% label: healthy
% fault: none
% runtime: 7
% what: hand-written Jacobi sweeps for -lap(u) = 2 pi^2 sin(pi x) sin(pi y) on a fixed 100 x 100 grid with `while res > tol * max|f|` (relative residual 1e-9): the spectral radius cos(pi h) = 0.99952 makes it slow (about 43,000 sweeps, several seconds of busy silence, fixed arrays) but sure; then the error vs the exact sin(pi x) sin(pi y), O(h^2).
% Poisson problem -lap(u) = 2 pi^2 sin(pi x) sin(pi y) on the unit square with u = 0 on the boundary
% (exact solution sin(pi x) sin(pi y)), solved by hand-written Jacobi sweeps on a fixed grid until the
% discrete residual is below tol times max|f|; then the error against the exact solution (O(h^2)).
n = 100;
h = 1 / (n + 1);
[X, Y] = meshgrid((0:n+1) * h);
f = 2 * pi^2 * sin(pi * X) .* sin(pi * Y);
u = zeros(n + 2);
tol = 1e-9;
maxit = 500000;
I = 2:n+1;
fI = f(I, I);
printf('Jacobi sweeps for the Poisson problem on a %d x %d grid, relative residual tol = %g ...\n', n, n, tol);
fflush(stdout);
it = 0;
res = Inf;
while res > tol * max(abs(fI(:)))
  u(I, I) = 0.25 * (u(I-1, I) + u(I+1, I) + u(I, I-1) + u(I, I+1) + h^2 * fI);
  r = fI + (u(I-1, I) + u(I+1, I) + u(I, I-1) + u(I, I+1) - 4 * u(I, I)) / h^2;
  res = max(abs(r(:)));
  it = it + 1;
  if it >= maxit
    error('Jacobi did not converge in %d sweeps (residual %.3e)', maxit, res);
  end
end
exact = sin(pi * X) .* sin(pi * Y);
printf('converged after %d sweeps (residual %.2e): max error vs exact %.3e (h^2 = %.3e)\n', ...
       it, res, max(abs(u(:) - exact(:))), h^2);
