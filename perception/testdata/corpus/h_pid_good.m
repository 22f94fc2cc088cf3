% label: healthy
% fault: none
% watch: overshoot_pct <= 5
% watch: finite(y)
% runtime: 3
% what: PID (Kp=3, Ki=1.5, Kd=1) on a second-order lag plant 1/((s+1)(0.5s+1)), unit step: settles with ~2% overshoot, below the watched 5% bound.
Kp = 3; Ki = 1.5; Kd = 1;
dt = 1e-3; T = 12; r = 1;
x1 = 0; x2 = 0; I = 0; eprev = r; ymax = 0;
for n = 1:round(T / dt)
  y = x2;
  e = r - y;
  I = I + e * dt;
  D = (e - eprev) / dt;
  eprev = e;
  u = Kp * e + Ki * I + Kd * D;
  x1 = x1 + dt * (-x1 + u);
  x2 = x2 + dt * (-x2 + x1) / 0.5;
  ymax = max(ymax, y);
  if mod(n, 50) == 0
    t = n * dt;
    overshoot = max(0, (ymax - r) / r * 100);
    labmate_log('y', y, t);
    labmate_log('overshoot_pct', overshoot, t);
    printf('t=%.2f y=%.5f u=%.5f\n', t, y, u);
    pause(0.012);
  end
end
printf('settled at %.5f, peak overshoot %.2f %%\n', y, overshoot);
