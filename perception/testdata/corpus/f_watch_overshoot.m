% label: faulty
% fault: constraint
% watch: overshoot_pct <= 5
% runtime: 18
% what: PID on a two-lag plant following a sequence of setpoint steps; the first step uses a good tuning (~2% overshoot), then a "faster" retune (Kp=5, Ki=5, Kd=0.2) keeps the loop stable but every later step overshoots by ~30%, violating the watched 5% limit.
dt = 1e-3;
setpoints = [1 2 0.5 1.5 1 2.5 0.5 2];
x1 = 0; x2 = 0; I = 0; eprev = NaN;
r0 = 0; announced = false;
n = 0;
for s = 1:numel(setpoints)
  r = setpoints(s);
  if s == 1
    Kp = 3; Ki = 1.5; Kd = 1;
  else
    Kp = 5; Ki = 5; Kd = 0.2;           % the retune
  end
  peakdev = 0;
  printf('setpoint step %g -> %g with Kp=%g Ki=%g Kd=%g\n', r0, r, Kp, Ki, Kd);
  for k = 1:8000
    n = n + 1;
    y = x2;
    e = r - y;
    I = I + e * dt;
    if isnan(eprev), D = 0; else, D = (e - eprev) / dt; end
    eprev = e;
    u = Kp * e + Ki * I + Kd * D;
    x1 = x1 + dt * (-x1 + u);
    x2 = x2 + dt * (-x2 + x1) / 0.5;
    peakdev = max(peakdev, (y - r) * sign(r - r0));   % overshoot beyond the new setpoint
    if mod(k, 50) == 0
      t = n * dt;
      overshoot = max(0, peakdev / abs(r - r0) * 100);
      if ~announced && overshoot > 5
        labmate_log('onset', 1);     % first report over the watched limit
        announced = true;
      end
      labmate_log('overshoot_pct', overshoot, t);
      labmate_log('y', y, t);
      printf('t=%.2f y=%.5f setpoint=%g\n', t, y, r);
      pause(0.012);
    end
  end
  printf('step done: overshoot %.1f %%\n', overshoot);
  r0 = r;
end
printf('sequence finished\n');
