% label: faulty
% fault: stagnation
% runtime: 15
% what: simulated-quantile fit of a lognormal size distribution (mu, sigma) to 500 measured sizes with fminsearch (Display 'iter'), each evaluation drawing 4000 fresh random samples (a pause stands in for a costlier simulator); the generator is seeded once at the top, not per evaluation, so the objective carries sampling noise (std 0.016 around its minimum of ~0.047): once the simplex reaches the noise level it keeps a vertex whose value is only a lucky draw (f = 0.0100 at iteration 18, below the noise's 5th percentile of 0.025), every new point looks worse, and fminsearch shrinks and contracts around it with the same best f for the remaining ~50 iterations until it runs out of function evaluations (180).
% the simulator wrapper, written next to the data so that fminsearch can call it
src = {
  'function f = misfit_noisy(theta, qobs, p)'
  '  % simulated-quantile misfit of a lognormal size distribution'
  '  persistent marked'
  '  s = exp(theta(1) + abs(theta(2)) * randn(4000, 1));   % simulate 4000 sizes'
  '  f = sum((quantile(s, p) - qobs) .^ 2);'
  '  if f < 0.025 && isempty(marked)'
  '    labmate_log(''onset'', 1);   % below the 5th percentile of the noise at the optimum: a lucky draw enters the simplex'
  '    marked = true;'
  '  end'
  '  pause(0.07);                 % stand-in for the cost of a real simulator run'
  'end'
};
fid = fopen('misfit_noisy.m', 'w');
fprintf(fid, '%s\n', src{:});
fclose(fid);
rehash();

randn('state', 7);
p = [0.1 0.25 0.5 0.75 0.9]';
sizes = exp(1.2 + 0.5 * randn(500, 1));          % the measured particle sizes (um)
qobs = quantile(sizes, p);
printf('fitting lognormal (mu, sigma) to %d sizes by simulated quantiles\n', numel(sizes));
opts = optimset('Display', 'iter', 'MaxFunEvals', 180, 'TolX', 1e-4, 'TolFun', 1e-6);
[theta, fval, exitflag, out] = fminsearch(@(th) misfit_noisy(th, qobs, p), [0.5 1.0], opts);
printf('mu = %.4f, sigma = %.4f, misfit = %.4g, exitflag = %d, %d iterations, %d evaluations\n', ...
       theta(1), abs(theta(2)), fval, exitflag, out.iterations, out.funcCount);
