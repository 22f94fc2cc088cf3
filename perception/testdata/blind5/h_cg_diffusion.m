% label: healthy
% fault: none
% runtime: 8
% what: steady temperature in a uniformly heated square plate (Poisson equation, 5-point Laplacian on a 48x48 grid, symmetric positive definite) solved by a hand-written conjugate-gradient loop printing its relative residual every iteration: the residual is not monotone (CG minimises the energy norm, not the residual; it first rises to ~3 and wanders) but falls overall, eight decades in about 90 iterations, and the loop stops at 1e-8.
n = 48; h = 1 / (n + 1);
e = ones(n, 1);
D = spdiags([-e 2*e -e], -1:1, n, n);         % -d2/dx2 * h^2
I = speye(n);
A = kron(I, D) + kron(D, I);
b = ones(n * n, 1) * h^2;                     % uniform heating
x = zeros(n * n, 1);
r = b - A * x; p = r; rr = r' * r; nb = norm(b);
printf('Poisson %dx%d, conjugate gradients\n', n, n);
printf('%5s %14s %12s\n', 'iter', 'rel. residual', 'max T');
for k = 1:300
  Ap = A * p;
  alpha = rr / (p' * Ap);
  x = x + alpha * p;
  r = r - alpha * Ap;
  rrn = r' * r;
  printf('%5d %14.6e %12.6f\n', k, sqrt(rrn) / nb, max(x));
  fflush(stdout);
  if sqrt(rrn) / nb < 1e-8
    break;
  end
  p = r + (rrn / rr) * p;
  rr = rrn;
  pause(0.08);
end
printf('converged after %d iterations, relative residual %.3e\n', k, sqrt(rrn) / nb);
