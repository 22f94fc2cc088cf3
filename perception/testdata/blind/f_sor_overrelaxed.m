% label: faulty
% fault: divergence
% runtime: 7
% what: successive over-relaxation for the 2D Poisson equation (16x16 grid, 5-point Laplacian) with omega = 2.05, just outside SOR's convergence interval (0, 2): the iteration matrix has spectral radius above 1, so the relative residual, which should fall below 1e-8, grows from the first sweep by about 4% per sweep (x5 after two sweeps, x10 after 50, x100 after 100) with no jump and no NaN; printed every second sweep.
n = 16; h = 1/(n+1);
e = ones(n,1); T = spdiags([-e 2*e -e], -1:1, n, n);
A = kron(speye(n), T) + kron(T, speye(n));
b = h^2*ones(n*n,1);
x = zeros(n*n,1); omega = 2.05; tol = 1e-8;
D = diag(diag(A)); Lo = tril(A,-1); U = triu(A,1);
M = D/omega + Lo; N = (1/omega - 1)*D - U;
nb = norm(b);
printf('SOR, omega = %.2f, %d unknowns, tol = %g\n', omega, n*n, tol);
for k = 1:200
  x = M \ (N*x + b);
  if mod(k,2)==0
    rr = norm(b - A*x)/nb;
    printf('sweep %4d  relres = %.4e\n', k, rr);
    if k == 2
      labmate_log('onset', 1);   % already 5x the initial residual: SOR is diverging from the start
    end
    if rr < tol, break; end
    pause(0.06);
  end
end
