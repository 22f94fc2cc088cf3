% label: healthy
% fault: none
% watch: pi_est in [3.0, 3.3]
% runtime: 3
% what: Monte Carlo estimate of pi from batches of 100k uniform points; the estimate wanders but converges like 1/sqrt(N) and stays within a few hundredths of pi.
rand('state', 2024);
hits = 0; total = 0;
for b = 1:80
  P = rand(100000, 2);
  hits = hits + sum(sum(P.^2, 2) <= 1);
  total = total + 100000;
  est = 4 * hits / total;
  labmate_log('pi_est', est);
  printf('samples=%d pi_est=%.6f abs_err=%.2e\n', total, est, abs(est - pi));
  pause(0.04);
end
printf('estimate %.6f with %d samples\n', est, total);
