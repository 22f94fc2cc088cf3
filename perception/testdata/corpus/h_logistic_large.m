% label: healthy
% fault: none
% watch: N < 1.1e12
% watch: finite(N)
% runtime: 3
% what: logistic growth of a bacterial population from 2e11 to its carrying capacity 1e12 (RK4), plus a constant reference biomass ~1e30; values are large but bounded and saturate.
r = 0.9; K = 1e12; N = 2e11;
M = 1.989e30;                 % a constant large quantity (kg) carried alongside
f = @(N) r * N * (1 - N / K);
dt = 0.05;
for n = 1:300
  k1 = f(N); k2 = f(N + 0.5*dt*k1); k3 = f(N + 0.5*dt*k2); k4 = f(N + dt*k3);
  N = N + dt / 6 * (k1 + 2*k2 + 2*k3 + k4);
  t = n * dt;
  if mod(n, 2) == 0
    labmate_log('N', N, t);
    labmate_log('reference_mass', M, t);
    printf('day=%.2f N=%.6e fraction_of_K=%.6f reference_mass=%.4e\n', t, N, N / K, M);
    pause(0.02);
  end
end
printf('final population %.6e (K = %.1e)\n', N, K);
