% label: healthy
% fault: none
% watch: energy decreasing
% watch: finite(x)
% runtime: 3
% what: mass-spring-damper (m=1, k=10, c=0.6) integrated with classical RK4; the amplitude decays smoothly and the energy falls monotonically.
m = 1; k = 10; c = 0.6;
f = @(s) [s(2); -(k * s(1) + c * s(2)) / m];
s = [1; 0];           % position, velocity
dt = 1e-3; T = 10;
nsteps = round(T / dt);
every = 50;           % report every 0.05 s of simulated time
for n = 1:nsteps
  k1 = f(s);
  k2 = f(s + 0.5 * dt * k1);
  k3 = f(s + 0.5 * dt * k2);
  k4 = f(s + dt * k3);
  s = s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  if mod(n, every) == 0
    t = n * dt;
    E = 0.5 * m * s(2)^2 + 0.5 * k * s(1)^2;
    labmate_log('x', s(1), t);
    labmate_log('energy', E, t);
    printf('t=%.2f x=%+.6f v=%+.6f E=%.6e\n', t, s(1), s(2), E);
    pause(0.012);
  end
end
printf('final amplitude envelope: %.3e (initial 1.0)\n', sqrt(2 * E / k));
