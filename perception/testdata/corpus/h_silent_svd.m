% label: healthy
% fault: none
% expect-silence: 30
% runtime: 5
% what: condition numbers of two dense random 1800x1800 matrices via full SVD: prints a line, then computes silently for ~5-6 s (declared), then prints the results.
randn('state', 3);
n = 1800;
printf('computing singular values of 2 dense %dx%d matrices (quiet for a few seconds)...\n', n, n);
kappa = zeros(1, 2);
for i = 1:2
  A = randn(n);
  s = svd(A);
  kappa(i) = s(1) / s(end);
end
for i = 1:2
  printf('matrix %d: sigma_max/sigma_min = %.4e\n', i, kappa(i));
  labmate_log('cond', kappa(i));
end
printf('largest condition number %.4e\n', max(kappa));
