% label: healthy
% fault: none
% runtime: 6
% what: simulated-quantile fit of a lognormal size distribution (mu, sigma) to 500 measured sizes with fminsearch (Display 'iter'), each evaluation simulating 4000 samples (a pause stands in for a costlier simulator) from the same fixed seed (common random numbers), so the objective is a smooth deterministic function of (mu, sigma): the simplex reflects, expands and contracts onto mu = 1.13, sigma = 0.51 and fminsearch stops on its simplex-size and function tolerances after about 30 iterations.
% the simulator wrapper, written next to the data so that fminsearch can call it
src = {
  'function f = misfit_crn(theta, qobs, p)'
  '  % simulated-quantile misfit of a lognormal size distribution'
  '  randn(''state'', 12345);                                % common random numbers: same draws every call'
  '  s = exp(theta(1) + abs(theta(2)) * randn(4000, 1));   % simulate 4000 sizes'
  '  f = sum((quantile(s, p) - qobs) .^ 2);'
  '  pause(0.07);                 % stand-in for the cost of a real simulator run'
  'end'
};
fid = fopen('misfit_crn.m', 'w');
fprintf(fid, '%s\n', src{:});
fclose(fid);
rehash();

randn('state', 7);
p = [0.1 0.25 0.5 0.75 0.9]';
sizes = exp(1.2 + 0.5 * randn(500, 1));          % the measured particle sizes (um)
qobs = quantile(sizes, p);
printf('fitting lognormal (mu, sigma) to %d sizes by simulated quantiles\n', numel(sizes));
opts = optimset('Display', 'iter', 'MaxFunEvals', 180, 'TolX', 1e-4, 'TolFun', 1e-6);
[theta, fval, exitflag, out] = fminsearch(@(th) misfit_crn(th, qobs, p), [0.5 1.0], opts);
printf('mu = %.4f, sigma = %.4f, misfit = %.4g, exitflag = %d, %d iterations, %d evaluations\n', ...
       theta(1), abs(theta(2)), fval, exitflag, out.iterations, out.funcCount);
