% label: faulty
% fault: error
% runtime: 3
% what: particle-in-cell style binning of drifting particles into 40 cells; nothing keeps particles inside the box, and when the first one crosses x = 1 its cell index 41 is out of bounds: "index (41): out of bound 40" ends the run.
rand('state', 4);
ncell = 40;
xp = 0.2 + 0.6 * rand(500, 1);
vp = 0.02 * randn(500, 1) + 0.01;
dt = 0.12;
announced = false;
for step = 1:200
  xp = xp + vp * dt;
  idx = floor(xp * ncell) + 1;
  if ~announced && any(idx > ncell | idx < 1)
    labmate_log('onset', 1);          % a particle has left the box: the next line fails
    announced = true;
  end
  counts = zeros(ncell, 1);
  for p = 1:numel(xp)
    counts(idx(p)) = counts(idx(p)) + 1;
  end
  labmate_log('max_density', max(counts));
  printf('step %d  occupied=%d  max_count=%d  mean_x=%.4f\n', step, nnz(counts), max(counts), mean(xp));
  pause(0.1);
end
