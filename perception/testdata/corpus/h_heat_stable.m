% label: healthy
% fault: none
% watch: peak decreasing
% watch: finite(peak)
% runtime: 3
% what: 1-D heat equation, explicit FTCS with r = dt/dx^2 = 0.4 (below the 0.5 stability limit), Dirichlet ends; the profile diffuses smoothly and its peak decays monotonically.
nx = 51; dx = 1 / (nx - 1); r = 0.4; dt = r * dx^2;
x = linspace(0, 1, nx)';
u = sin(pi * x) + 0.5 * sin(3 * pi * x) .* (x < 0.5);
u([1 end]) = 0;
for n = 1:3000
  u(2:end-1) = u(2:end-1) + r * (u(3:end) - 2 * u(2:end-1) + u(1:end-2));
  if mod(n, 20) == 0
    t = n * dt;
    labmate_log('peak', max(u), t);
    printf('t=%.5f max_temp=%.6e mean=%.6e\n', t, max(u), mean(u));
    pause(0.02);
  end
end
printf('final peak %.4e (decay rate ~ pi^2)\n', max(u));
