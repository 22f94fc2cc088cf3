% label: faulty
% fault: oscillation
% watch: finite(y)
% runtime: 25
% what: PID on a two-lag plant with 0.2 s actuator delay; after 4 s an "aggressive" retune (Kp 3 -> 15) together with a setpoint step makes the loop unstable: an oscillation whose amplitude grows ~1.7x every half period.
dt = 1e-3; tau1 = 1; tau2 = 0.5; delay = 0.2;
nd = round(delay / dt);
buf = zeros(1, nd); ib = 1;      % circular buffer for the delayed actuator command
x1 = 0; x2 = 0; I = 0; eprev = NaN;
Kp = 3; Ki = 1.5; Kd = 1; r = 1;
retuned = false;
for n = 1:round(90 / dt)
  t = n * dt;
  if ~retuned && t >= 4
    Kp = 15; Ki = 6; Kd = 0.3; r = 1.5;   % the retune that destabilises the loop
    retuned = true;
    printf('t=%.2f retuned: Kp=%g Ki=%g Kd=%g, new setpoint %g\n', t, Kp, Ki, Kd, r);
    labmate_log('onset', 1);
  end
  y = x2;
  e = r - y;
  I = I + e * dt;
  if isnan(eprev), D = 0; else, D = (e - eprev) / dt; end
  eprev = e;
  u = Kp * e + Ki * I + Kd * D;
  ud = buf(ib); buf(ib) = u; ib = mod(ib, nd) + 1;
  x1 = x1 + dt * (-x1 + ud) / tau1;
  x2 = x2 + dt * (-x2 + x1) / tau2;
  if mod(n, 50) == 0
    labmate_log('y', y, t);
    labmate_log('e', e, t);
    printf('t=%.2f y=%.6g u=%.6g\n', t, y, u);
    pause(0.012);
  end
end
printf('finished with y = %g\n', y);
