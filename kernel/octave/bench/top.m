## -*- texinfo -*-
## @deftypefn  {} {@var{loc} =} top (@var{well})
## @deftypefnx {} {@var{loc} =} top (@var{well}, @var{z})
## The top of @var{well}, @var{z} mm above it (Opentrons' Well.top): the twin
## models no heights, so a location is its well, and @var{loc} is @var{well}.
## @seealso{aspirate, dispense, wells}
## @end deftypefn
function loc = top (well, z = 0)
  if (nargin < 1 || nargin > 2)
    print_usage ();
  endif
  if (! ischar (well) || ! any (well == "/"))
    error ("top: the first argument must be a well, such as plate.wells.A1");
  endif
  if (! (isnumeric (z) && isreal (z) && isscalar (z) && isfinite (z)))
    error ("top: z must be a number of millimetres");
  endif
  loc = well;
endfunction
