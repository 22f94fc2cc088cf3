## -*- texinfo -*-
## @deftypefn {} {@var{a} =} analyze (@var{well})
## labmate's extension, not Opentrons (the Python module's protocol.analyze): inject a sample
## of @var{well} into the bench's analysis twin (an HPLC with a calibrated method). @var{a} is
## a struct: @code{well}, @code{species} (1×n cell), @code{areas} (1×n peak areas),
## @code{response_factors} (1×n, area per mM) and @code{undetected} (species the method does
## not see); amount_mM and yield_vs_limiting compute from it.
## @seealso{amount_mM, yield_vs_limiting, delay}
## @end deftypefn
function a = analyze (well)
  if (nargin != 1 || ! ischar (well))
    print_usage ();
  endif
  c = __bench__ ("analyze", struct ("well", well)).event.chromatogram;
  a.well = c.well;
  n = numel (c.peaks);
  a.species = cell (1, n);
  a.areas = zeros (1, n);
  a.response_factors = zeros (1, n);
  for i = 1:n
    if (iscell (c.peaks))
      p = c.peaks{i};
    else
      p = c.peaks(i);
    endif
    a.species{i} = p.species;
    a.areas(i) = p.area;
    a.response_factors(i) = p.response_factor;
  endfor
  a.undetected = {};
  if (isfield (c, "undetected"))
    a.undetected = cellstr (c.undetected)';
  endif
endfunction
