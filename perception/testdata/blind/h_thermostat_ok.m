% label: healthy
% fault: none
% runtime: 7
% what: Langevin dynamics of 200 independent particles in a harmonic trap, thermostatted to a declared setpoint of 300 K (reduced units scaled to kelvin) with the BAOAB splitting: the kinetic temperature rises from 30 K to the setpoint within a few relaxation times and then fluctuates around 300 K with a standard deviation of about 30 K (the normal finite-size fluctuation, 300 * sqrt(2/N); single readings range from 220 to 330 K), with no trend.
randn('seed', 2);
N = 200; Tset = 300; gamma = 1.0; dt = 0.05; w = 1.0;
kB = 1 / 300;                     % reduced units: kB * 300 K = 1
x = zeros(N, 1); v = sqrt(kB * 30) * randn(N, 1);
c1 = exp(-gamma * dt); c2 = sqrt((1 - c1^2) * kB * Tset);
printf('Langevin thermostat, setpoint %d K, gamma = %g, dt = %g\n', Tset, gamma, dt);
for n = 1:3000
  v = v - 0.5 * dt * w^2 * x;
  x = x + 0.5 * dt * v;
  v = c1 * v + c2 * randn(N, 1);
  x = x + 0.5 * dt * v;
  v = v - 0.5 * dt * w^2 * x;
  if mod(n, 40) == 0
    T = mean(v.^2) / kB;
    printf('step %5d   T = %7.2f K   T_set = %d K\n', n, T, Tset);
    fflush(stdout);
    pause(0.05);
  end
end
