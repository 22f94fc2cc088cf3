## S = allmargin (SYS)
##
## All stability margins of the open loop SYS under unity negative feedback, as MATLAB's Control
## System Toolbox defines them. labmate's implementation: Octave's control package (3.4) has no
## allmargin. It sits at the END of the kernel's load path, so an allmargin that a package or
## your own path provides takes precedence.
##
## SYS is a SISO tf, ss or zpk model, continuous or discrete (for an NY-by-NU model S is an
## NY-by-NU struct array, one per I/O pair). The fields, each a row vector in increasing
## frequency (empty, 1-by-0, when there is no such crossing):
##   GainMargin   1/|L(jw)| at every frequency where the phase of L crosses -180 degrees (mod 360)
##   GMFrequency  those frequencies, rad/s (rad/TimeUnit)
##   PhaseMargin  180 + the phase of L, wrapped to (-180, 180], in degrees, where |L(jw)| = 1
##   PMFrequency  those gain-crossover frequencies
##   DelayMargin  the delay that would destabilise the loop at each gain crossover:
##                (PhaseMargin mod 360) * pi/180 / w, in seconds (continuous) or in sample
##                periods (discrete)
##   DMFrequency  the same frequencies as PMFrequency
##   Stable       1 if the closed loop 1/(1+L) is stable (poles in the open left half-plane,
##                or inside the unit circle), else 0
## Crossings are the exact roots of polynomials in w (continuous, s = jw) or on the unit circle
## (discrete, z = exp(jwT), 0 < wT <= pi), refined by Newton's method; w = 0 counts as a phase
## crossover only when L(0) is real and negative. A gain margin of Inf (margin's answer when the
## phase never crosses -180) is here no entry at all. Models with time delays are not handled.
##
## Example:  pkg load control; S = allmargin (tf (2, [1 3 2 0]))  % GainMargin 3 at sqrt(2) rad/s
function S = allmargin (sys)
  if (nargin != 1)
    print_usage ();
  endif
  if (! isa (sys, "lti"))
    error ("allmargin: SYS must be a tf, ss or zpk model, not %s", class (sys));
  endif
  [ny, nu] = size (sys);
  if (ny * nu != 1)
    S = repmat (__allmargin_siso__ (sys(1, 1)), ny, nu);
    for i = 1:ny
      for j = 1:nu
        S(i, j) = __allmargin_siso__ (sys(i, j));
      endfor
    endfor
    return;
  endif
  S = __allmargin_siso__ (sys);
endfunction

function S = __allmargin_siso__ (sys)
  [num, den] = tfdata (tf (sys), "v");
  num = __allmargin_trim__ (num);
  den = __allmargin_trim__ (den);
  ts = get (sys, "tsam");
  discrete = ts != 0;
  if (discrete && ts < 0)
    ts = 1;  # unspecified sample time: frequencies in rad/sample
  endif
  L = @(w) __allmargin_eval__ (num, den, w, discrete, ts);
  if (discrete)
    [wp, wg] = __allmargin_crossings_z__ (num, den, ts);
  else
    [wp, wg] = __allmargin_crossings_s__ (num, den);
  endif

  gm = zeros (1, 0); gw = zeros (1, 0);
  for w = wp
    v = L (w);
    if (isfinite (v) && real (v) < 0 && abs (imag (v)) <= 1e-6 * abs (v))
      gm(end+1) = 1 / abs (v);
      gw(end+1) = w;
    endif
  endfor
  pm = zeros (1, 0); pw = zeros (1, 0); dm = zeros (1, 0);
  for w = wg
    v = L (w);
    if (isfinite (v) && abs (abs (v) - 1) <= 1e-6)
      p = angle (v) * 180 / pi + 180;
      p = mod (p + 180, 360) - 180;  # (-180, 180]
      if (p == -180)
        p = 180;
      endif
      pm(end+1) = p;
      pw(end+1) = w;
      d = mod (p, 360) * pi / 180 / w;
      if (discrete)
        d /= ts;  # in sample periods
      endif
      dm(end+1) = d;
    endif
  endfor
  [gw, i] = sort (gw); gm = gm(i);
  [pw, i] = sort (pw); pm = pm(i); dm = dm(i);

  n = numel (num); d = numel (den);
  cl = [zeros(1, max (0, n - d)), den] + [zeros(1, max (0, d - n)), num];
  r = roots (__allmargin_trim__ (cl));
  if (discrete)
    stable = all (abs (r) < 1);
  else
    stable = all (real (r) < 0);
  endif
  S = struct ("GainMargin", gm, "GMFrequency", gw, "PhaseMargin", pm, "PMFrequency", pw, ...
              "DelayMargin", dm, "DMFrequency", pw, "Stable", double (stable));
endfunction

function p = __allmargin_trim__ (p)
  p = p(:).';
  k = find (p != 0, 1);
  if (isempty (k))
    p = 0;
  else
    p = p(k:end);
  endif
endfunction

function v = __allmargin_eval__ (num, den, w, discrete, ts)
  if (discrete)
    x = exp (1i * w * ts);
  else
    x = 1i * w;
  endif
  dv = polyval (den, x);
  if (abs (dv) <= 1e-12 * max (abs (den)) * max (1, abs (x)) ^ (numel (den) - 1))
    v = Inf;  # a pole on the boundary
  else
    v = polyval (num, x) / dv;
  endif
endfunction

## Continuous: with p(jw) = re(w) + j im(w), phase crossovers are the roots of
## Im(N conj(D)) = Ni Dr - Nr Di, gain crossovers those of |N|^2 - |D|^2.
function [wp, wg] = __allmargin_crossings_s__ (num, den)
  [nr, ni] = __allmargin_jw__ (num);
  [dr, di] = __allmargin_jw__ (den);
  wp = __allmargin_realroots__ (__allmargin_sub__ (conv (ni, dr), conv (nr, di)));
  wg = __allmargin_realroots__ (__allmargin_sub__ (__allmargin_sub__ (conv (nr, nr), -conv (ni, ni)), ...
                                                   __allmargin_sub__ (conv (dr, dr), -conv (di, di))));
  wg = wg(wg > 0);
  ## w = 0 is a phase crossover only where L(0) is real and negative.
  l0 = __allmargin_eval__ (num, den, 0, false, 0);
  wp = wp(wp > 0);
  if (isfinite (l0) && real (l0) < 0)
    wp = [0, wp];
  endif
endfunction

## The real and imaginary parts of p(jw) as real polynomials in w.
function [re, im] = __allmargin_jw__ (p)
  n = numel (p) - 1;
  k = n:-1:0;  # the power of each coefficient
  c = p .* (1i .^ k);
  re = real (c) .* (mod (k, 2) == 0);
  im = imag (c) .* (mod (k, 2) == 1);
endfunction

## a - b for polynomials of any lengths.
function c = __allmargin_sub__ (a, b)
  n = max (numel (a), numel (b));
  c = [zeros(1, n - numel (a)), a] - [zeros(1, n - numel (b)), b];
endfunction

## The real nonnegative roots of p, refined by Newton's method; none if p is identically zero.
function w = __allmargin_realroots__ (p)
  w = zeros (1, 0);
  p = __allmargin_trim__ (p);
  if (numel (p) < 2 || all (abs (p) <= eps * 1e3 * max (abs ([p 1]))))
    return;
  endif
  r = roots (p).';
  r = real (r(abs (imag (r)) <= 1e-6 * max (1, abs (r)) & real (r) >= -1e-9));
  dp = polyder (p);
  for i = 1:numel (r)
    for it = 1:5
      g = polyval (dp, r(i));
      if (g == 0)
        break;
      endif
      r(i) -= polyval (p, r(i)) / g;
    endfor
  endfor
  w = __allmargin_uniq__ (max (r, 0));
endfunction

## Discrete: on z = exp(jt), Im(N(z) conj(D(z))) = 0 where z^(dn+dd) (N(z)D(1/z) - N(1/z)D(z))
## vanishes, |N| = |D| where z^m (N(z)N(1/z) - D(z)D(1/z)) does; keep roots with |z| = 1,
## 0 <= t <= pi.
function [wp, wg] = __allmargin_crossings_z__ (num, den, ts)
  dn = numel (num) - 1; dd = numel (den) - 1; m = max (dn, dd);
  a = __allmargin_sub__ ([conv(num, fliplr (den)), zeros(1, dn)], [conv(fliplr (num), den), zeros(1, dd)]);
  b = __allmargin_sub__ ([conv(num, fliplr (num)), zeros(1, m - dn)], [conv(den, fliplr (den)), zeros(1, m - dd)]);
  wp = __allmargin_circle__ (a) / ts;
  wg = __allmargin_circle__ (b) / ts;
  wg = wg(wg > 0);
  l0 = __allmargin_eval__ (num, den, 0, true, ts);
  wp = wp(wp > 0);
  if (isfinite (l0) && real (l0) < 0)
    wp = [0, wp];
  endif
endfunction

## The angles in [0, pi] of the roots of p on the unit circle, refined by Newton's method on the
## circle.
function t = __allmargin_circle__ (p)
  t = zeros (1, 0);
  p = __allmargin_trim__ (p);
  if (numel (p) < 2 || all (abs (p) <= eps * 1e3 * max (abs ([p 1]))))
    return;
  endif
  r = roots (p).';
  r = r(abs (abs (r) - 1) <= 1e-5);
  dp = polyder (p);
  for i = 1:numel (r)
    for it = 1:5
      g = polyval (dp, r(i));
      if (g == 0)
        break;
      endif
      r(i) -= polyval (p, r(i)) / g;
      r(i) /= abs (r(i));  # stay on the circle
    endfor
  endfor
  t = angle (r);
  t = t(t >= -1e-12 & t <= pi + 1e-12);
  t = __allmargin_uniq__ (min (max (t, 0), pi));
endfunction

## Sorted, with values closer than 1e-8 (relative) merged: a double root comes out twice.
function x = __allmargin_uniq__ (x)
  x = sort (x);
  keep = [true, (diff(x) > 1e-8 * max(1, abs(x(2:end))))];
  x = x(keep);
endfunction
