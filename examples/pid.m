% A PD controller for the plant 1/(s^2 + s), simulated with explicit Euler: each pass raises
% the proportional gain and sets the derivative gain for a damping ratio of 0.8, and reports
% the overshoot of its step response and the tracking residual (integral of the squared
% error), which labmate's --watch constraints judge while it runs.
dt = 1e-3; T = 10; n = round(T / dt); zeta = 0.8;
for pass = 1:5
  Kp = 2^(pass - 1);
  Kd = 2 * zeta * sqrt(Kp) - 1;
  x = 0; v = 0; peak = 0; sse = 0;
  for k = 1:n
    e = 1 - x;
    u = Kp * e - Kd * v;
    v = v + dt * (u - v);
    x = x + dt * v;
    peak = max(peak, x);
    sse = sse + e^2 * dt;
  end
  overshoot = max(0, (peak - 1) * 100);
  labmate_log("overshoot_pct", overshoot, pass);
  labmate_log("residual", sse, pass);
  printf("pass %d: Kp = %g, Kd = %.3f, overshoot %.2f%%, residual %.4f\n", pass, Kp, Kd, overshoot, sse);
end
