% label: healthy
% fault: none
% runtime: 3
% what: shortest travel times from a depot on a 60-node random road network by Dijkstra's algorithm, printing the distance table as nodes are settled: every node starts at dist = Inf (not reached yet), the number of unreached nodes falls to 0 and the Inf entries are replaced by finite travel times; a node that is still unreached is correctly printed as Inf.
rand('seed', 11);
n = 60;
P = rand(n, 2) * 10;
W = Inf(n);
for i = 1:n
  d = sqrt(sum((P - P(i, :)).^2, 2));
  [~, idx] = sort(d);
  for j = idx(2:4)'
    W(i, j) = d(j) * (1 + 0.3 * rand()); W(j, i) = W(i, j);
  end
end
dist = Inf(1, n); dist(1) = 0; done = false(1, n);
printf('initial: dist(2) = %g, dist(%d) = %g, unreached = %d\n', dist(2), n, dist(n), sum(isinf(dist)));
for k = 1:n
  cand = dist; cand(done) = Inf;
  [dmin, u] = min(cand);
  if isinf(dmin)
    printf('remaining nodes are unreachable\n');
    break;
  end
  done(u) = true;
  dist = min(dist, dmin + W(u, :));
  printf('settled %2d nodes: node %2d at %.3f h, dist(%d) = %g, unreached = %d\n', k, u, dmin, n, dist(n), sum(isinf(dist)));
  fflush(stdout);
  pause(0.04);
end
printf('farthest node: %.3f h\n', max(dist(~isinf(dist))));
