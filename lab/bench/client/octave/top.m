## -*- texinfo -*-
## @deftypefn  {} {@var{loc} =} top (@var{well})
## @deftypefnx {} {@var{loc} =} top (@var{well}, @var{z})
## The top of @var{well}, @var{z} mm above it (Opentrons' Well.top): the twin models no
## heights, so a location is its well, and @var{loc} is @var{well}.
## @seealso{aspirate, dispense, wells}
## @end deftypefn
function loc = top (well, z = 0)
  if (nargin < 1 || nargin > 2)
    print_usage ();
  endif
  loc = __bench_location__ ("top", well, z);
endfunction
