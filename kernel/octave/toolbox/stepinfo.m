## S = stepinfo (SYS)
## S = stepinfo (Y, T)
## S = stepinfo (Y, T, YFINAL)
## S = stepinfo (Y, T, YFINAL, YINIT)
## S = stepinfo (..., "SettlingTimeThreshold", ST, "RiseTimeLimits", [LO HI])
##
## Step-response characteristics, as MATLAB's Control System Toolbox defines them. labmate's
## implementation: Octave's control package (3.4) has no stepinfo. It sits at the END of the
## kernel's load path, so a stepinfo that a package or your own path provides takes precedence.
##
## SYS is a tf, ss or zpk model (continuous or discrete; stable, or every field is NaN but Peak
## and PeakTime, which are Inf): its step response is simulated densely until it has settled,
## with YINIT = 0 and YFINAL = dcgain (SYS). Y and T are response data (Y a vector, or an
## NS-by-NY-by-NU array as step returns); YFINAL defaults to the last sample of Y, YINIT to 0.
## For NY-by-NU systems or data, S is an NY-by-NU struct array.
##
## With D = YFINAL - YINIT, ST = 0.02 and [LO HI] = [0.1 0.9] by default, the fields are
##   RiseTime       time from the first crossing of YINIT + LO*D to that of YINIT + HI*D
##   TransientTime  first time after which |Y - YFINAL| <= ST * max |Y - YFINAL|
##   SettlingTime   first time after which |Y - YFINAL| <= ST * |D|
##   SettlingMin    min of Y once it has risen (from the HI crossing on)
##   SettlingMax    max of Y once it has risen
##   Overshoot      percent of |D| by which Y goes beyond YFINAL (0 if it does not)
##   Undershoot     percent of |D| by which Y goes the wrong way, beyond YINIT (0 if not)
##   Peak           max |Y - YINIT|
##   PeakTime       the time of Peak (both refined by a parabola through the samples around it)
## Times are the T values (the step is applied at T = 0); crossings of continuous responses are
## interpolated linearly between samples. A characteristic the response never reaches is NaN.
##
## Example:  pkg load control; S = stepinfo (tf (4, [1 1.6 4])); S.Overshoot  % 25.38
function S = stepinfo (varargin)
  if (nargin < 1)
    print_usage ();
  endif
  ## Name-value options.
  st = 0.02;
  lims = [0.1 0.9];
  k = find (cellfun (@ischar, varargin), 1);
  if (isempty (k))
    k = nargin + 1;
  endif
  opts = varargin(k:end);
  args = varargin(1:k-1);
  if (mod (numel (opts), 2) != 0)
    error ("stepinfo: options come in name, value pairs");
  endif
  for i = 1:2:numel (opts)
    v = opts{i+1};
    switch (lower (opts{i}))
      case "settlingtimethreshold"
        if (! (isscalar (v) && isreal (v) && v > 0 && v < 1))
          error ("stepinfo: SettlingTimeThreshold must be a scalar in (0, 1)");
        endif
        st = v;
      case "risetimelimits"
        if (! (numel (v) == 2 && isreal (v) && v(1) >= 0 && v(1) < v(2) && v(2) <= 1))
          error ("stepinfo: RiseTimeLimits must be [LO HI] with 0 <= LO < HI <= 1");
        endif
        lims = v(:).';
      otherwise
        error ("stepinfo: unknown option '%s' (use SettlingTimeThreshold or RiseTimeLimits)", opts{i});
    endswitch
  endfor

  if (isa (args{1}, "lti"))
    if (numel (args) > 1)
      error ("stepinfo: with a model, give only options after it (not %s)", class (args{2}));
    endif
    S = __stepinfo_sys__ (args{1}, st, lims);
    return;
  endif

  if (numel (args) < 2 || numel (args) > 4)
    error ("stepinfo: use stepinfo (SYS) or stepinfo (Y, T[, YFINAL[, YINIT]])");
  endif
  y = args{1};
  t = args{2}(:);
  if (! (isnumeric (y) && isreal (y) && isnumeric (t) && isreal (t)))
    error ("stepinfo: Y and T must be real numeric arrays");
  endif
  if (isvector (y))
    y = y(:);
  endif
  ns = numel (t);
  if (size (y, 1) != ns)
    error ("stepinfo: Y has %d samples but T has %d", size (y, 1), ns);
  endif
  if (ns < 2 || any (diff (t) <= 0))
    error ("stepinfo: T must hold at least two increasing times");
  endif
  ny = size (y, 2);
  nu = size (y, 3);
  yfinal = reshape (y(end, :, :), ny, nu);
  yinit = zeros (ny, nu);
  if (numel (args) >= 3 && ! isempty (args{3}))
    yfinal = __stepinfo_expand__ (args{3}, ny, nu, "YFINAL");
  endif
  if (numel (args) >= 4 && ! isempty (args{4}))
    yinit = __stepinfo_expand__ (args{4}, ny, nu, "YINIT");
  endif
  S = __stepinfo_struct__ (ny, nu);
  for i = 1:ny
    for j = 1:nu
      S(i, j) = __stepinfo_one__ (y(:, i, j), t, yinit(i, j), yfinal(i, j), st, lims, true);
    endfor
  endfor
endfunction

function v = __stepinfo_expand__ (v, ny, nu, name)
  if (isscalar (v))
    v = repmat (v, ny, nu);
  elseif (! isequal (size (v), [ny nu]))
    error ("stepinfo: %s must be a scalar or %d-by-%d", name, ny, nu);
  endif
endfunction

function S = __stepinfo_struct__ (ny, nu)
  f = {"RiseTime", "TransientTime", "SettlingTime", "SettlingMin", "SettlingMax", ...
       "Overshoot", "Undershoot", "Peak", "PeakTime"};
  c = [f; repmat({NaN}, 1, numel (f))];
  S = repmat (struct (c{:}), ny, nu);
endfunction

function S = __stepinfo_sys__ (sys, st, lims)
  [ny, nu] = size (sys);
  S = __stepinfo_struct__ (ny, nu);
  if (! isstable (sys))
    for i = 1:numel (S)
      S(i).Peak = Inf;
      S(i).PeakTime = Inf;
    endfor
    return;
  endif
  yfinal = reshape (dcgain (sys), ny, nu);
  yinit = zeros (ny, nu);
  [~, t0] = step (sys);
  tf_ = t0(end);
  discrete = ! isct (sys);
  for attempt = 1:8
    if (discrete)
      ts = get (sys, "tsam");
      t = (0:ts:max (tf_, 2 * ts)).';
    else
      t = linspace (0, tf_, 8001).';
    endif
    y = step (sys, t);
    y = reshape (y, numel (t), ny, nu);
    ## Settled: the last quarter of the window stays well inside every channel's band.
    tail = y(t >= 0.75 * t(end), :, :);
    band = reshape (abs (yfinal - yinit), 1, ny, nu) * st / 4;
    err = abs (tail - reshape (yfinal, 1, ny, nu));
    if (all ((err <= band + eps)(:)))
      break;
    endif
    tf_ *= 2;
  endfor
  for i = 1:ny
    for j = 1:nu
      S(i, j) = __stepinfo_one__ (y(:, i, j), t, yinit(i, j), yfinal(i, j), st, lims, ! discrete);
    endfor
  endfor
endfunction

function s = __stepinfo_one__ (y, t, yinit, yfinal, st, lims, interp)
  s = __stepinfo_struct__ (1, 1);
  d = yfinal - yinit;
  [pk, ip] = max (abs (y - yinit));
  s.Peak = pk;
  s.PeakTime = t(ip);
  if (interp && ip > 1 && ip < numel (y) && all (isfinite (y(ip-1:ip+1))))
    ## The vertex of the parabola through the three samples around the peak.
    a = abs (y(ip-1:ip+1) - yinit);
    h = t(ip+1) - t(ip);
    c = a(1) - 2 * a(2) + a(3);
    if (c < 0 && abs (t(ip) - t(ip-1) - h) <= 1e-9 * h)
      dx = (a(1) - a(3)) / (2 * c);
      s.PeakTime = t(ip) + dx * h;
      s.Peak = a(2) - (a(1) - a(3)) * dx / 4;
    endif
  endif
  if (! isfinite (d) || d == 0 || any (! isfinite (y)))
    return;
  endif
  yn = (y - yinit) / d;  # rises from 0 toward 1
  tlo = __stepinfo_cross__ (yn, t, lims(1), interp);
  [thi, ihi] = __stepinfo_cross__ (yn, t, lims(2), interp);
  s.RiseTime = thi - tlo;
  if (! isnan (thi))
    s.SettlingMin = min (y(ihi:end));
    s.SettlingMax = max (y(ihi:end));
  endif
  e = abs (y - yfinal);
  s.SettlingTime = __stepinfo_settle__ (y, t, yfinal, e, st * abs (d), interp);
  s.TransientTime = __stepinfo_settle__ (y, t, yfinal, e, st * max (e), interp);
  [ymax, imax] = max (yn);
  if (imax == ip)
    ymax = s.Peak / abs (d);  # the refined peak
  endif
  s.Overshoot = 100 * max (0, ymax - 1);
  s.Undershoot = 100 * max (0, -min (yn));
endfunction

## The first time yn reaches level (from below), and the first sample at or past it.
function [tc, i] = __stepinfo_cross__ (yn, t, level, interp)
  tc = NaN;
  i = find (yn >= level, 1);
  if (isempty (i))
    i = NaN;
    return;
  endif
  tc = t(i);
  if (interp && i > 1 && yn(i) > yn(i-1))
    tc = t(i-1) + (t(i) - t(i-1)) * (level - yn(i-1)) / (yn(i) - yn(i-1));
  endif
endfunction

## The first time after which |y - yfinal| stays within band; NaN if it never settles.
function ts = __stepinfo_settle__ (y, t, yfinal, e, band, interp)
  i = find (e > band, 1, "last");
  if (isempty (i))
    ts = t(1);
  elseif (i == numel (e))
    ts = NaN;
  elseif (! interp)
    ts = t(i+1);
  else
    target = yfinal + sign (y(i) - yfinal) * band;
    ts = t(i) + (t(i+1) - t(i)) * (y(i) - target) / (y(i) - y(i+1));
  endif
endfunction
