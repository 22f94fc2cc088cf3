% label: healthy
% fault: none
% runtime: 9
% what: natural-parameter continuation of the 1D Bratu problem u'' + lambda*exp(u) = 0 (60 interior points) from lambda = 0.2 up to 3.45, just below the fold at 3.51, with a full Newton solve (tolerance 1e-10) at each of 40 lambda values, printing ||F|| at every Newton step: each solve starts at ||F|| ~ 0.13-0.16 and falls quadratically to 1e-11..1e-13 in 4-5 steps, then the residual jumps back up by 11 decades for the next lambda; near the fold max(u) grows faster (0.97 at the end) and Newton needs one more step. Healthy throughout: a sawtooth of converging solves, not a residual that wanders or diverges.
n = 60; h = 1/(n+1);
e = ones(n,1); D2 = spdiags([e -2*e e], -1:1, n, n)/h^2;
u = zeros(n,1); tol = 1e-10;
lams = linspace(0.2, 3.45, 40);
for lam = lams
  for it = 1:30
    F = D2*u + lam*exp(u);
    nf = norm(F)*sqrt(h);
    printf('lambda = %.4f  newton %2d  ||F|| = %.3e\n', lam, it, nf);
    pause(0.04);
    if nf < tol, break; end
    J = D2 + lam*spdiags(exp(u), 0, n, n);
    u = u - J\F;
  end
  printf('lambda = %.4f  max(u) = %.6f  (%d Newton steps)\n', lam, max(u), it);
end
