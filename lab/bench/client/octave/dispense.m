## -*- texinfo -*-
## @deftypefn {} {} dispense (@var{pip}, @var{volume}, @var{well})
## Dispense @var{volume} µL from the pipette's tip into @var{well}.
## @seealso{load_instrument, mix, transfer}
## @end deftypefn
function dispense (pip, volume, well)
  if (nargin != 3)
    print_usage ();
  endif
  a.volume = volume;
  a.well = well;
  a.mount = pip.mount;
  __bench__ ("dispense", a);
endfunction
