% label: healthy
% fault: none
% runtime: 8
% what: two identical pendula (as harmonic oscillators) joined by a weak spring, integrated with velocity Verlet (symplectic) and printed as a table t E1 E2 E_tot: the energy beats back and forth completely between the two (E1 from 0.5 to 0 and back, E2 the other way) while the total energy E_tot stays constant to 1e-5.
k = 1; kc = 0.05; dt = 0.01;
x = [1; 0]; v = [0; 0];
acc = @(x) [-k*x(1) - kc*(x(1) - x(2)); -k*x(2) - kc*(x(2) - x(1))];
a = acc(x);
printf('t E1 E2 E_tot\n');
for n = 1:8000
  v = v + 0.5*dt*a; x = x + dt*v; a = acc(x); v = v + 0.5*dt*a;
  if mod(n, 20) == 0
    E1 = 0.5*v(1)^2 + 0.5*k*x(1)^2; E2 = 0.5*v(2)^2 + 0.5*k*x(2)^2;
    Et = E1 + E2 + 0.5*kc*(x(1) - x(2))^2;
    printf('%.2f %.8f %.8f %.10f\n', n*dt, E1, E2, Et);
    fflush(stdout); pause(0.02);
  end
end
