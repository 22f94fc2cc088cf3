% label: faulty
% fault: constraint
% watch: temperature < 400
% runtime: 23
% what: oven with an on/off thermostat (hysteresis 385-392 K) reading a sensor with a 20 s lag; the heating element's stored heat carries the chamber to ~409 K, violating the watched limit of 400 K, then it keeps cycling above 400 K.
P = 4000; Ch = 800; Co = 4000; kho = 60; koa = 8; tau_s = 20; Ta = 295;
lo = 385; hi = 392;
H = Ta; T = Ta; S = Ta; on = true;
dt = 0.05;
announced = false;
for n = 1:18000
  if S < lo, on = true; end
  if S > hi, on = false; end
  q = P * on;
  H = H + dt * (q - kho * (H - T)) / Ch;
  T = T + dt * (kho * (H - T) - koa * (T - Ta)) / Co;
  S = S + dt * (T - S) / tau_s;
  if mod(n, 20) == 0
    t = n * dt;
    Tp = round(T * 1000) / 1000;   % the value as printed
    if ~announced && Tp >= 400
      labmate_log('onset', 1);     % first reported temperature over the limit
      announced = true;
    end
    labmate_log('temperature', T, t);
    printf('t=%.0f temperature=%.3f sensor=%.3f heater=%d\n', t, T, S, on);
    pause(0.025);
  end
end
printf('run finished\n');
