% label: healthy
% fault: none
% runtime: 13
% what: speed control of a small DC motor by a PI controller with conditional-integration anti-windup, reference stepping 0 -> 1500 -> 3000 -> 800 -> 2200 rpm every 4 s (fixed-width columns with units in brackets): after each step the speed is hundreds to 1500 rpm off its reference for ~0.3-0.5 s, with the voltage saturated at 48 V on the big step, then tracks within a few rpm of measurement noise.
% speed control of a small DC motor (J = 2e-4 kg m^2, b = 1e-4 N m s, K = 0.1 V s/rad, R = 1 ohm,
% L = 10 mH, supply limited to +-48 V) by a PI controller with conditional integration; the reference
% steps 0 -> 1500 -> 3000 -> 800 -> 2200 rpm every 4 s
J = 2e-4; bm = 1e-4; K = 0.1; R = 1; Lm = 0.01;
Kp = 0.2; Ki = 2.0;
dt = 5e-4; w = 0; i = 0; integ = 0;
rpm = 60 / (2 * pi);
sps = [0 1500 3000 800 2200];
printf('%8s %10s %10s %9s\n', 't[s]', 'ref[rpm]', 'speed[rpm]', 'V[V]');
for k = 0:40000
  t = k * dt;
  ref = sps(min(5, floor(t / 4) + 1)) / rpm;   % rad/s
  e = ref - w;
  V = Kp * e + Ki * integ;
  if abs(V) < 48 || sign(e) ~= sign(V)           % conditional integration (anti-windup)
    integ = integ + e * dt;
  end
  V = min(48, max(-48, V));
  di = (V - R * i - K * w) / Lm;
  dw = (K * i - bm * w) / J;
  i = i + dt * di; w = w + dt * dw;
  if mod(k, 100) == 0
    printf('%8.2f %10.1f %10.1f %9.2f\n', t, ref * rpm, w * rpm + 3 * randn(), V);
    fflush(stdout);
    pause(0.02);
  end
end
