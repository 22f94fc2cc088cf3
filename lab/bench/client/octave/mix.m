## -*- texinfo -*-
## @deftypefn {} {} mix (@var{pip}, @var{repetitions}, @var{volume}, @var{well})
## Aspirate and dispense @var{volume} µL in @var{well}, @var{repetitions} times.
## @seealso{aspirate, dispense}
## @end deftypefn
function mix (pip, repetitions, volume, well)
  if (nargin != 4)
    print_usage ();
  endif
  a.repetitions = repetitions;
  a.volume = volume;
  a.well = well;
  a.mount = pip.mount;
  __bench__ ("mix", a);
endfunction
