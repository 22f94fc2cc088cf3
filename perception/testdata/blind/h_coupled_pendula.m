% label: healthy
% fault: none
% runtime: 5
% what: a chain of three masses coupled by springs (fixed ends), only the first one displaced at t = 0, integrated with the symplectic Stormer-Verlet scheme: the energy moves from mass 1 to mass 3 and back (E1 swings between ~1 and 0.01 of the total, E3 between 0 and ~0.85), while E_total stays constant to about 3e-5.
k = 1.0; kc = 0.15; m = 1.0;
K = [k+kc -kc 0; -kc k+2*kc -kc; 0 -kc k+kc];
x = [1; 0; 0]; v = [0; 0; 0];
dt = 0.01;
Eparts = @(x, v) 0.5 * m * v.^2 + 0.5 * k * x.^2;
Etot = @(x, v) 0.5 * m * (v' * v) + 0.5 * x' * K * x;
E0 = Etot(x, v);
a = -K * x / m;
printf('three coupled oscillators, Stormer-Verlet, dt = %g\n', dt);
for n = 1:24000
  v = v + 0.5 * dt * a;
  x = x + dt * v;
  a = -K * x / m;
  v = v + 0.5 * dt * a;
  if mod(n, 300) == 0
    e = Eparts(x, v) / E0;
    printf('t = %7.2f   E1 = %.4f   E2 = %.4f   E3 = %.4f   E_total = %.7f\n', n * dt, e(1), e(2), e(3), Etot(x, v) / E0);
    fflush(stdout);
    pause(0.04);
  end
end
