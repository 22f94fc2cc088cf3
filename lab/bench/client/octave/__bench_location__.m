## -*- texinfo -*-
## @deftypefn {} {@var{loc} =} __bench_location__ (@var{name}, @var{well}, @var{z})
## The location @var{name} (top, bottom) of @var{well}, @var{z} mm from it: the twin models
## no heights, so a location is its well. Internal to top and bottom.
## @end deftypefn
function loc = __bench_location__ (name, well, z)
  if (! ischar (well) || ! any (well == "/"))
    error ("%s: the first argument must be a well, such as plate.wells.A1", name);
  endif
  if (! (isnumeric (z) && isreal (z) && isscalar (z) && isfinite (z)))
    error ("%s: z must be a number of millimetres", name);
  endif
  loc = well;
endfunction
