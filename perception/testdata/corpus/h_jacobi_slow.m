% label: healthy
% fault: none
% watch: residual decreasing
% runtime: 3
% what: Jacobi iteration for the 1-D Poisson problem on 60 points; spectral radius ~0.9987, so the residual falls slowly but strictly every report until the tolerance is met.
n = 60;
e = ones(n, 1);
A = spdiags([-e 2*e -e], -1:1, n, n);
h = 1 / (n + 1);
xs = (1:n)' * h;
b = h^2 * pi^2 * sin(pi * xs);      % -u'' = pi^2 sin(pi x), u = sin(pi x)
u = zeros(n, 1);
d = full(diag(A));
r0 = norm(b);
tol = 1e-2;
it = 0;
while true
  u = u + (b - A * u) ./ d;
  it = it + 1;
  if mod(it, 40) == 0
    res = norm(b - A * u) / r0;
    printf('iter %5d  residual = %.6e\n', it, res);
    pause(0.03);
    if res < tol
      break;
    end
  end
end
err = max(abs(u - sin(pi * xs)));
printf('converged after %d iterations, max error vs exact solution %.3e\n', it, err);
