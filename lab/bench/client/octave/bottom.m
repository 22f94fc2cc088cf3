## -*- texinfo -*-
## @deftypefn  {} {@var{loc} =} bottom (@var{well})
## @deftypefnx {} {@var{loc} =} bottom (@var{well}, @var{z})
## The bottom of @var{well}, @var{z} mm above it (Opentrons' Well.bottom): the twin models no
## heights, so a location is its well, and @var{loc} is @var{well}.
## @seealso{aspirate, dispense, wells}
## @end deftypefn
function loc = bottom (well, z = 0)
  if (nargin < 1 || nargin > 2)
    print_usage ();
  endif
  loc = __bench_location__ ("bottom", well, z);
endfunction
