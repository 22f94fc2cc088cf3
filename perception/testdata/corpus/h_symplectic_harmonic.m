% label: healthy
% fault: none
% watch: energy in [0.49, 0.51]
% watch: x in [-1.01, 1.01]
% runtime: 3
% what: undamped harmonic oscillator (omega = 2 pi) with the symplectic leapfrog (velocity Verlet) integrator: a steady, constant-amplitude oscillation whose energy stays within 1e-3 of 0.5.
w = 2 * pi;
x = 1; v = 0;         % start at rest, amplitude 1
dt = 2e-3;
a = -w^2 * x;
for n = 1:5000
  v = v + 0.5 * dt * a;
  x = x + dt * v;
  a = -w^2 * x;
  v = v + 0.5 * dt * a;
  if mod(n, 25) == 0
    t = n * dt;
    E = 0.5 * (v / w)^2 + 0.5 * x^2;   % normalised so E = 0.5
    labmate_log('x', x, t);
    labmate_log('energy', E, t);
    printf('t=%.3f x=%+.6f energy=%.8f\n', t, x, E);
    pause(0.012);
  end
end
printf('10 periods done, final energy %.8f\n', E);
