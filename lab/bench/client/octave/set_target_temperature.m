## -*- texinfo -*-
## @deftypefn  {} {} set_target_temperature (@var{hs}, @var{celsius})
## @deftypefnx {} {@var{state} =} set_target_temperature (@var{hs}, @var{celsius})
## The heater-shaker @var{hs} (from load_module). As set_and_wait_for_temperature: the twin reaches the temperature at once. @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.set_target_temperature.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = set_target_temperature (hs, celsius)
  if (nargin != 2)
    print_usage ();
  endif
  state = set_and_wait_for_temperature (hs, celsius);
endfunction
