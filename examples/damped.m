% A damped oscillator, integrated with explicit Euler: streams one line per tenth of a
% second of simulated time and records the energy through labmate's telemetry helper.
k = 4; c = 0.4; x = 1; v = 0; dt = 1e-3;
for step = 1:5000
  a = -k * x - c * v;
  x = x + dt * v;
  v = v + dt * a;
  if mod(step, 100) == 0
    t = step * dt;
    labmate_log("energy", 0.5 * v^2 + 0.5 * k * x^2, t);
    printf("t=%.1f x=%.4f\n", t, x);
    pause(0.02);
  end
end
printf("final amplitude %.4f\n", abs(x));
