% label: faulty
% fault: constraint
% runtime: 12
% what: flow control of a dosing pump (first-order plant, gain 0.08 L/min per % of pump speed, 3 s lag) by a PI controller written with the integral time Ti: a good tuning (Ti = 4 s) brings the flow to 4.85 of its 5.0 L/min reference within 30 s, then a "retune" sets Ti = Inf to "switch off the integral" for a test and is never undone: the controller is proportional-only with Kp = 0.5, and the flow settles at 1.67 L/min, a third of its declared reference of 5.0 L/min, for the remaining 100 s of the run.
K = 0.8; tau = 3.0; dt = 0.1;
ref = 5.0; y = 0; integ = 0;
Kp = 0.5; Ti = 4.0;
printf('PI flow control, reference = %.1f L/min\n', ref);
for k = 0:1300
  t = k * dt;
  if k == 300
    Ti = Inf; integ = 0; y = 0;
    printf('t = %.1f s: retuned, Kp = %.2f, Ti = %g (restarted from zero flow)\n', t, Kp, Ti);
  end
  e = ref - y;
  integ = integ + e * dt;
  u = Kp * (e + integ / Ti) * 100 / 8;
  u = min(100, max(0, u));
  y = y + dt * (K * u / 10 - y) / tau;
  ym = y + 0.02 * randn();
  if k == 420
    labmate_log('onset', 1);
  end
  if mod(k, 10) == 0
    printf('t = %6.1f s   reference = %.2f L/min   flow = %.3f L/min   pump = %5.1f %%\n', t, ref, ym, u);
    fflush(stdout);
    pause(0.075);
  end
end
