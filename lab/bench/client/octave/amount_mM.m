## -*- texinfo -*-
## @deftypefn {} {@var{mM} =} amount_mM (@var{a}, @var{species})
## The amount of @var{species} in the analysis @var{a} (from analyze), in mM: its peak area
## over its response factor.
## @seealso{analyze, yield_vs_limiting}
## @end deftypefn
function mM = amount_mM (a, species)
  if (nargin != 2)
    print_usage ();
  endif
  i = find (strcmp (a.species, species), 1);
  if (isempty (i))
    error ("amount_mM: the analysis of %s has no peak of '%s' (peaks: %s)", a.well, species, strjoin (a.species, ", "));
  endif
  mM = a.areas(i) / a.response_factors(i);
endfunction
