% label: faulty
% fault: stagnation
% runtime: 14
% what: steady state of a discrete logistic population model with harvesting, N <- N + r N (1 - N/K) - h N, by iterating the map until two successive iterates agree to 1e-10: with r = 2.3 the fixed point is unstable (|1 + r - h - 2 r N*/K| > 1) and the map settles on a 2-cycle, so the loop runs silently and busily without ever meeting its tolerance, until its 12 s wall-clock guard raises an error.
r = 2.3; K = 1000; h = 0.05;
N = 120;
printf('iterating the harvested logistic map to its steady state (r = %.2f, K = %d, h = %.2f)...\n', r, K, h);
fflush(stdout);
labmate_log('onset', 1);                 % the silent loop that cannot converge starts here
t0 = tic; it = 0;
while true
  Nn = N + r * N * (1 - N / K) - h * N;
  it = it + 1;
  if abs(Nn - N) < 1e-10
    break;
  end
  N = Nn;
  if mod(it, 20000) == 0 && toc(t0) > 12
    error('steady state not reached after %d iterations (last N = %.6f)', it, N);
  end
end
printf('steady state N* = %.6f after %d iterations\n', N, it);
