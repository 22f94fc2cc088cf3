% label: faulty
% fault: oscillation
% runtime: 15
% what: lab furnace (first order, 60 s time constant, 15 s dead time, heater 0-100 %) under a PID 'retuned' to Kp = 3, Ti = 20 s without anti-windup, setpoint sp=250.0 C printed on every key=value line: the integral winds up during the heat-up, the temperature overshoots to 381 C, and the loop then never settles: T swings between about 200 and 300 C with the heater banging between 0 and 100 % for the whole run (a limit cycle of ~140 s period).
% temperature control of a lab furnace (first order, gain 4 K per % heater, time constant 60 s,
% 15 s dead time from heater to thermocouple) by a PID without anti-windup, heater limited to 0-100 %
Kp = 3.0; Ti = 20.0; Td = 2.0;       % "faster" retune (was Kp = 1, Ti = 90 s)
Kplant = 4.0; tau = 60; delay = 15; Ta = 20; dt = 0.5;
sp = 250;
nd = round(delay / dt);
ubuf = zeros(1, nd);
T = Ta; integ = 0; eprev = sp - T;
printf('furnace PID: setpoint sp=%.1f C, Kp=%.2f, Ti=%.1f s, Td=%.1f s\n', sp, Kp, Ti, Td);
logged = false; crossed = false;
for k = 0:1600
  t = k * dt;
  e = sp - T;
  integ = integ + e * dt;
  u = Kp * (e + integ / Ti + Td * (e - eprev) / dt);
  eprev = e;
  u = min(100, max(0, u));
  ubuf = [ubuf(2:end) u];
  T = T + dt * (-(T - Ta) + Kplant * ubuf(1)) / tau;
  Tm = T + 0.2 * randn();
  if T > sp, crossed = true; end
  if ~logged && crossed && abs(T - sp) > 10
    labmate_log('onset', 1); logged = true;
  end
  if mod(k, 5) == 0
    printf('t=%6.1fs sp=%.1f T=%7.2f u=%5.1f%% I=%9.1f\n', t, sp, Tm, u, integ);
    fflush(stdout);
    pause(0.035);
  end
end
