% label: faulty
% fault: divergence
% runtime: 10
% what: an undamped mass-spring oscillator (omega = 10 rad/s) integrated with forward Euler at h = 0.3 s (h omega = 3; forward Euler is unstable on an undamped oscillator at any step, and violently at this one), printed as an aligned table under a header "step t x v energy": every step multiplies the energy by 1 + (h omega)^2 = 10, so x and v swing with growing amplitude and the energy grows exponentially through 100 steps.
omega = 10; h = 0.3; x = 1; v = 0;
printf('%6s %8s %12s %12s %12s\n', 'step', 't', 'x', 'v', 'energy');
labmate_log('onset', 1);   % unstable from the first step
for n = 1:100
  [x, v] = deal(x + h * v, v - h * omega^2 * x);
  energy = 0.5 * v^2 + 0.5 * omega^2 * x^2;
  printf('%6d %8.3f %12.4e %12.4e %12.4e\n', n, n * h, x, v, energy);
  pause(0.1);
end
