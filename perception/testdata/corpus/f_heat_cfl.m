% label: faulty
% fault: divergence
% watch: finite(peak)
% runtime: 25
% what: 1-D heat equation, explicit FTCS with r = dt/dx^2 = 0.75 (above the 0.5 limit) starting from a hot left half; the sawtooth (checkerboard) mode grows 2x per step and swamps the solution.
nx = 41; dx = 1 / (nx - 1);
r = 0.75;                       % the mistake: dt = 0.75 dx^2, stability needs r <= 0.5
dt = r * dx^2;
x = linspace(0, 1, nx)';
u = 100 * (x < 0.5);
u([1 end]) = 0;
printf('FTCS heat equation: nx=%d dt=%.3e r=%.2f\n', nx, dt, r);
for n = 1:500
  if n == 1
    labmate_log('onset', 1);    % the first step of the unstable integration
  end
  u(2:end-1) = u(2:end-1) + r * (u(3:end) - 2 * u(2:end-1) + u(1:end-2));
  t = n * dt;
  labmate_log('peak', max(abs(u)), t);
  printf('step %d t=%.5f peak=%.6g center=%.6g\n', n, t, max(abs(u)), u(21));
  pause(0.05);
end
