% label: faulty
% fault: solver
% runtime: 14
% what: steady temperature in a square channel with a flow along x (convection-diffusion, cell Peclet number 0.24, central differences) solved by the hand-written conjugate-gradient loop from the lab's heat-conduction code, printing its relative residual every iteration; CG needs a symmetric positive definite matrix and the convection term makes it nonsymmetric, so the recurrences lose their meaning: the residual never falls below its start and grows almost linearly, about 0.54 per iteration (3 -> 84 over 150 iterations), while the printed max T climbs to 0.44, six times the peak of the diffusion-only plate, with no NaN, no message and no breakdown.
n = 40; h = 1 / (n + 1);
pe = 20;                                      % flow speed * L / diffusivity
e = ones(n, 1);
D = spdiags([-e 2*e -e], -1:1, n, n);         % -d2/dx2 * h^2
C = spdiags([-e 0*e e], -1:1, n, n) * (pe * h / 2);   % u d/dx * h^2, central
I = speye(n);
A = kron(I, D + C) + kron(D, I);              % x fastest: convection along x
b = ones(n * n, 1) * h^2;                     % uniform heating
x = zeros(n * n, 1);
r = b - A * x; p = r; rr = r' * r; nb = norm(b);
printf('convection-diffusion %dx%d, Pe = %g, conjugate gradients\n', n, n, pe);
printf('%5s %14s %12s\n', 'iter', 'rel. residual', 'max T');
labmate_log('onset', 1);                      % CG on a nonsymmetric matrix: wrong from the first iteration
for k = 1:150
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
printf('stopped after %d iterations, relative residual %.3e\n', k, sqrt(rrn) / nb);
