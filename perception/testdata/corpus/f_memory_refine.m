% label: faulty
% fault: memory
% runtime: 3
% what: midpoint-rule integration of x^2 on grids refined 4x every level, keeping every level's node vector "for a later Richardson extrapolation"; memory quadruples each level until Octave fails with "out of memory or dimension too large for Octave's index type".
keep = {};
printf('integrating x^2 on [0, 1] with 4x more nodes per level (exact value 1/3)\n');
labmate_log('onset', 1);                   % the unbounded growth starts with the first level
for level = 0:40
  N = 2^(2 * level + 23);                  % 8 Mi nodes (64 MB), 4x per level
  h = 1 / N;
  x = linspace(h / 2, 1 - h / 2, N)';
  keep{end+1} = x;                         % the leak: every level's nodes are retained
  est = sumsq(x) * h;
  mb = sum(cellfun(@numel, keep)) * 8 / 2^20;
  labmate_log('retained_mb', mb);
  printf('level %d: N=%d abs_err=%.3e retained=%.0f MB\n', level, N, abs(est - 1/3), mb);
  pause(0.2);
end
