% label: faulty
% fault: divergence
% runtime: 14
% what: first-order upwind advection of a square pulse around a periodic channel: the coarse-grid run (Courant number 0.55) is stable and diffusive, but the refined run halves dx and keeps dt, so the Courant number is 1.1: the sawtooth mode is amplified by |1 - 2C| = 1.2 per step and max|u| grows steadily (1.19x per step) from 1 to ~5e6 over 100 printed steps with no sudden jump, while the total mass (exactly conserved by the scheme) stays at its initial value.
c = 1.0; L = 1.0; dt = 0.011;
for pass = 1:2
  if pass == 1
    nx = 50; nsteps = 20;
  else
    nx = 100; nsteps = 100;
  end
  dx = L / nx; C = c * dt / dx;
  x = ((1:nx) - 0.5) * dx;
  u = double(x > 0.2 & x < 0.4);
  mass0 = sum(u) * dx;
  printf('--- grid nx = %d, dt = %.3f, Courant = %.2f\n', nx, dt, C);
  if pass == 2
    labmate_log('onset', 1);
  end
  for n = 1:nsteps
    u = u - C * (u - circshift(u, 1));
    printf('step %3d  t = %.3f  max|u| = %.4e  mass = %.6f\n', n, n * dt, max(abs(u)), sum(u) * dx);
    fflush(stdout);
    pause(0.08);
  end
end
