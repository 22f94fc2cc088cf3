% label: faulty
% fault: stagnation
% runtime: 12
% what: ground state of a finite square well (z0 = 4) from z tan z = sqrt(z0^2 - z^2) by bisection in a `while abs(b - a) > 1e-20` loop: after about 52 halvings the bracket is two adjacent doubles 2.2e-16 apart around z = 1.2524, the midpoint rounds to an end point, and the loop spins silently and busily until its 12 s wall-clock guard raises an error.
% Ground-state energy of a particle in a finite square well of strength z0 = 4 (z0 = a sqrt(2 m V0) / hbar):
% the even-state condition z tan(z) = sqrt(z0^2 - z^2) solved for z in (0, pi/2) by bisection, with the
% stopping tolerance on the bracket width set to 1e-20.
z0 = 4;
f = @(z) z .* tan(z) - sqrt(z0^2 - z.^2);
a = 0.1; b = pi / 2 - 1e-9;
fa = f(a);
tol = 1e-20;
printf('bisection for the ground state of the finite well (z0 = %g), tol = %g ...\n', z0, tol);
fflush(stdout);
labmate_log('onset', 1);                 % the bracket cannot shrink below one ulp (2.2e-16) of z ~ 1.25
t0 = tic;
it = 0;
while abs(b - a) > tol
  c = 0.5 * (a + b);
  fc = f(c);
  if sign(fc) == sign(fa)
    a = c; fa = fc;
  else
    b = c;
  end
  it = it + 1;
  if mod(it, 20000) == 0 && toc(t0) > 12
    error('bisection did not reach tol = %g after %d steps: bracket [%.17g, %.17g]', tol, it, a, b);
  end
end
z = 0.5 * (a + b);
printf('z = %.15f, E = -V0 (1 - (z/z0)^2) = %.12f V0 after %d steps\n', z, -(1 - (z / z0)^2), it);
