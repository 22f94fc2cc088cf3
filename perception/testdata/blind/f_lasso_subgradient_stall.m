% label: faulty
% fault: stagnation
% runtime: 12
% what: a lasso fit (40 noisy samples, 20 features, lambda = 2) by plain gradient descent on the non-smooth objective 0.5||Ax-b||^2 + lambda*||x||_1, using sign(x) as its gradient, fixed step 1/L, stopping when the gradient norm falls below 1e-6: at a non-smooth minimum the (sub)gradient never vanishes, so after about 15 iterations ||g|| stops falling and wanders between 9 and 11.5 (from 24 at the start), the objective jitters around 8.8, and the loop runs to its iteration cap; the onset is the first print where ||g|| stops falling (iteration 20: 10.8 after 8.5), after which it never gets back below 8.2.
rand('seed', 3); randn('seed', 3);
m = 40; n = 20;
A = randn(m, n); xtrue = zeros(n,1); xtrue([2 5 11]) = [1.5 -2 0.8];
b = A*xtrue + 0.05*randn(m,1);
lambda = 2.0; tol = 1e-6;
L = norm(A)^2;
x = zeros(n,1); step = 1/L;
printf('lasso by gradient descent, lambda = %g, step = %.3e, tol = %g\n', lambda, step, tol);
for k = 1:600
  r = A*x - b;
  f = 0.5*(r'*r) + lambda*sum(abs(x));
  g = A'*r + lambda*sign(x);
  if norm(g) < tol, break; end
  if mod(k,4)==0
    printf('iter %4d  f = %.6e  ||g|| = %.4e\n', k, f, norm(g));
    if k == 20
      labmate_log('onset', 1);   % ||g|| rises here (10.8 after 8.5) and from now on only jitters
    end
    pause(0.07);
  end
  x = x - step*g;
end
