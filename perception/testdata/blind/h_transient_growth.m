% label: healthy
% fault: none
% runtime: 8
% what: energy amplification of a small disturbance in a stable non-normal system, the linearised dynamics of a 2-mode model of plane Couette flow (dx/dt = A x with A = [-1/R 1; 0 -2/R], R = 200): the disturbance energy E/E0 grows for 150 time units (60 printed samples), to 360 after 22 and to ~2500 at t = 150, and then decays exponentially to 1e-2, because both eigenvalues are negative.
R = 200;
A = [-1/R 1; 0 -2/R];
x0 = [0; 1];
printf('eigenvalues: %g %g (stable)\n', eig(A));
peak = 0;
for t = [0:2.5:150, 160:20:1600]
  x = expm(A * t) * x0;
  G = (x' * x) / (x0' * x0);
  peak = max(peak, G);
  printf('t = %7.1f   E/E0 = %.5e\n', t, G);
  fflush(stdout);
  pause(0.03);
end
printf('maximum energy gain %.4g\n', peak);
