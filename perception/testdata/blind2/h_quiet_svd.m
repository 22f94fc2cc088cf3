% label: healthy
% fault: none
% expect-silence: 30
% runtime: 12
% what: proper orthogonal decomposition of 800 snapshots of a synthetic 1000-point velocity field (travelling waves + noise): two lines, then a dense SVD with no output for several seconds (declared), then the leading singular values, the 20 modes holding 99% of the energy and the noise floor.
% proper orthogonal decomposition (POD) of 800 snapshots of a synthetic PIV velocity field
% (travelling vortex street + noise): one dense SVD, quiet while LAPACK works
rand('seed', 1); randn('seed', 1);
nx = 1000; nt = 800;
xg = linspace(0, 8 * pi, nx)'; tg = linspace(0, 40, nt);
U = zeros(nx, nt);
for m = 1:6
  U = U + (1 / m) * sin(m * xg - 0.7 * m * tg) + (0.5 / m) * cos(m * xg * 1.3 - 0.4 * m * tg);
end
U = U + 0.05 * randn(nx, nt);
printf('POD of %d snapshots x %d points\n', nt, nx);
printf('computing the full SVD (this takes a while, no output until it is done)...\n');
fflush(stdout);
[Us, S, Vs] = svd(U, 'econ');
s = diag(S);
en = cumsum(s.^2) / sum(s.^2);
printf('leading singular values: %s\n', sprintf('%.2f ', s(1:8)));
printf('modes for 99%% of the energy: %d\n', find(en > 0.99, 1));
printf('noise floor (median singular value): %.3f\n', median(s));
