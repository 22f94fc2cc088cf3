% label: faulty
% fault: divergence
% runtime: 13
% what: plucked string (wave equation, 99 interior points) by the method of lines with classical RK4: at Courant number 1 the energy E is conserved to 2% (RK4's slight damping), then dt is set to 1.42 dx/c because 'RK4 is stable up to 2 sqrt(2)', a bound on omega*dt, which for the highest mode is 2*c*dt/dx = 2.84: the highest modes grow by 1.056 per step and the string's energy E/E0 rises steadily, x1.25 per printed line, from 1 to 2e9 over 110 lines with no jump.
% plucked string (wave equation u_tt = c^2 u_xx, fixed ends, 99 interior points), method of lines
% with classical RK4; the energy E = 1/2 int (u_t^2 + c^2 u_x^2) dx is conserved by the PDE
N = 99; c = 1.0; dx = 1 / (N + 1);
xg = (1:N)' * dx;
Lap = @(u) ([u(2:end); 0] - 2 * u + [0; u(1:end-1)]) / dx^2;
f = @(w) [w(N+1:end); c^2 * Lap(w(1:N))];
energy = @(w) 0.5 * sum(w(N+1:end).^2) * dx + 0.5 * c^2 * sum(diff([0; w(1:N); 0]).^2) / dx;
u0 = 0.01 * min(xg / 0.3, (1 - xg) / 0.7);       % plucked at 30% of the length, 1 cm high
w0 = [u0; zeros(N, 1)];
E0 = energy(w0);
logged = false;
% run 1: dt = dx / c; run 2: dt from "RK4 is stable up to 2*sqrt(2)", read as a Courant number
for run = 1:2
  if run == 1
    dt = 1.0 * dx / c; nsteps = 180; every = 5;
  else
    dt = 1.42 * dx / c; nsteps = 540; every = 4;
  end
  printf('run %d: Courant number c*dt/dx = %.2f, dt = %.4g s\n', run, c * dt / dx, dt);
  printf('  step       t [s]          E [J/m]         E/E0      max|u| [m]\n');
  w = w0;
  for s = 1:nsteps
    k1 = f(w); k2 = f(w + dt/2 * k1); k3 = f(w + dt/2 * k2); k4 = f(w + dt * k3);
    w = w + dt/6 * (k1 + 2*k2 + 2*k3 + k4);
    E = energy(w);
    if run == 2 && ~logged && E / E0 > 1.001
      labmate_log('onset', 1); logged = true;   % the energy of the string exceeds what was put in
    end
    if mod(s, every) == 0
      printf('%6d  %10.5f  %15.6e  %11.4e  %14.6e\n', s, s * dt, E, E / E0, max(abs(w(1:N))));
      fflush(stdout);
      pause(0.06);
    end
  end
end
