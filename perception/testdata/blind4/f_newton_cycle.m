% label: faulty
% fault: stagnation
% runtime: 12
% what: Newton's method for the real root (-1.769) of the characteristic polynomial s^3 - 2 s + 2 from s = 0 in an Octave `do ... until abs(ds) < 1e-12` loop: the iterates cycle exactly 0 -> 1 -> 0 from the first step, |ds| = 1 forever, and the loop spins silently until its 12 s wall-clock guard raises an error.
% Real root of the characteristic polynomial p(s) = s^3 - 2 s + 2 of the third-order linear ODE
% x''' - 2 x' + 2 x = 0 by Newton's method from s = 0: the iterates jump 0 -> 1 -> 0 -> 1 ... forever
% (the classic 2-cycle of this cubic), so |ds| stays 1 and the loop never meets its tolerance.
p = @(s) s^3 - 2 * s + 2;
dp = @(s) 3 * s^2 - 2;
s = 0;
tol = 1e-12;
printf('Newton iteration for the real root of s^3 - 2 s + 2 from s = %g ...\n', s);
fflush(stdout);
labmate_log('onset', 1);                 % the iterates cycle from the first step
t0 = tic;
it = 0;
do
  ds = -p(s) / dp(s);
  s = s + ds;
  it = it + 1;
  if mod(it, 20000) == 0 && toc(t0) > 12
    error('Newton did not converge after %d iterations (s = %.17g, ds = %.3g)', it, s, ds);
  end
until abs(ds) < tol
printf('real root s = %.15f after %d iterations, p(s) = %.2e\n', s, it, p(s));
