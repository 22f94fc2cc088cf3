## -*- texinfo -*-
## @deftypefn {} {} aspirate (@var{pip}, @var{volume}, @var{well})
## Draw @var{volume} µL from @var{well} into the pipette's tip.
## @seealso{load_instrument, mix, transfer}
## @end deftypefn
function aspirate (pip, volume, well)
  if (nargin != 3)
    print_usage ();
  endif
  a.volume = volume;
  a.well = well;
  a.mount = pip.mount;
  __bench__ ("aspirate", a);
endfunction
