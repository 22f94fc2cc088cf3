% Logistic growth, integrated with explicit Euler: prints the population every tenth of a
% unit of time and records it through labmate's telemetry helper.
r = 1.5; K = 100; N = 5; dt = 0.01;
for step = 1:500
  N = N + dt * r * N * (1 - N / K);
  if mod(step, 50) == 0
    t = step * dt;
    labmate_log("N", N, t);
    printf("t=%.1f N=%.3f\n", t, N);
  end
end
printf("final population %.3f of %g\n", N, K);
