% label: faulty
% fault: nan
% watch: finite(prey)
% runtime: 25
% what: predator-prey model with a constant prey harvest quota clamped at zero; once the prey is wiped out the per-capita growth rate is 0/0 = NaN, which then poisons both populations for the rest of the run.
a = 1.1; b = 0.4; c = 0.4; d = 0.1; quota = 2.2;
prey = 10; pred = 4;
dt = 0.02;
seen = false;
for n = 1:1200
  t = n * dt;
  old = prey;
  grow = prey + dt * (a * prey - b * prey * pred);
  prey = max(grow - dt * quota, 0);           % harvest cannot take more than is there
  rate = (prey - old) / old / dt;             % per-capita growth rate (0/0 once extinct)
  pred = pred + dt * (-c * pred + d * old * pred + 0.05 * rate * pred);
  if ~seen && isnan(rate)
    labmate_log('onset', 1);                  % first NaN
    seen = true;
  end
  if mod(n, 2) == 0
    labmate_log('prey', prey, t);
    labmate_log('predator', pred, t);
    printf('t=%.2f prey=%.6g predator=%.6g growth_rate=%.6g\n', t, prey, pred, rate);
    pause(0.04);
  end
end
printf('simulation finished: prey=%g predator=%g\n', prey, pred);
