% label: healthy
% fault: none
% watch: temperature in [15, 27]
% runtime: 4
% what: room temperature held at 21 C by a thermostat, sampled with sensor noise: an Ornstein-Uhlenbeck process (mean reversion, sd ~0.5) plus white measurement noise; noisy but stationary.
randn('state', 7);
theta = 0.8; mu = 21; sigma = 0.6; dt = 0.1;
T = mu;
for n = 1:300
  T = T + theta * (mu - T) * dt + sigma * sqrt(dt) * randn();
  meas = T + 0.15 * randn();
  if mod(n, 2) == 0
    labmate_log('temperature', meas, n * dt);
    printf('t=%.1f temperature=%.3f\n', n * dt, meas);
    pause(0.025);
  end
end
printf('held around %.1f C\n', mu);
