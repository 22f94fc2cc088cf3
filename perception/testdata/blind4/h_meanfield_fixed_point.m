% label: healthy
% fault: none
% runtime: 8
% what: Curie-Weiss mean-field magnetisation m = tanh((m + h)/T) in a weak field h = 5e-8, solved by plain fixed-point iteration in an Octave `do ... until dm < 1e-14` loop on 401 temperatures around T_c = 1: critical slowing down (slope 1 - m^2 ~ 1 - 2.8e-5 at T_c) makes it take about 500,000 silent iterations, but it converges; then m(0.9) = 0.5254, m(T_c) = (3h)^(1/3) and m(1.2) = h/(T - 1).
% Curie-Weiss (mean-field Ising) magnetisation m(T) in a weak field h: the self-consistency equation
% m = tanh((m + h) / T) (J = 1, k_B = 1) solved by plain fixed-point iteration on a grid of
% temperatures around T_c = 1, all at once, until no m changes by more than tol. Near T_c the map's
% slope (1 - m^2) / T is close to 1 (critical slowing down), so it converges slowly, but it does.
T = linspace(0.80, 1.20, 401);
h = 5e-8;
tol = 1e-14;
m = ones(size(T));
printf('fixed-point iteration for the mean-field magnetisation at %d temperatures, h = %g ...\n', numel(T), h);
fflush(stdout);
it = 0;
do
  mnew = tanh((m + h) ./ T);
  dm = max(abs(mnew - m));
  m = mnew;
  it = it + 1;
until dm < tol
resid = max(abs(m - tanh((m + h) ./ T)));
[~, ic] = min(abs(T - 1));
i9 = find(abs(T - 0.9) < 1e-9);
printf('converged after %d iterations: m(T=0.90) = %.6f, m(T_c) = %.6f ((3h)^(1/3) = %.6f), m(T=1.20) = %.3e, residual %.1e\n', ...
       it, m(i9), m(ic), (3 * h)^(1/3), m(end), resid);
