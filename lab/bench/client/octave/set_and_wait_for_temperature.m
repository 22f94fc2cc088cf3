## -*- texinfo -*-
## @deftypefn  {} {} set_and_wait_for_temperature (@var{hs}, @var{celsius})
## @deftypefnx {} {@var{state} =} set_and_wait_for_temperature (@var{hs}, @var{celsius})
## The heater-shaker @var{hs} (from load_module). Heat the plate to @var{celsius} °C (the twin reaches it at once); the reactions its wells map to run while delay holds it there. @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.set_and_wait_for_temperature.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = set_and_wait_for_temperature (hs, celsius)
  if (nargin != 2)
    print_usage ();
  endif
  ev = __bench_module__ (hs, "heaterShakerModuleV1", "hs_set_temperature", struct ("celsius", celsius));
  if (nargout > 0)
    state = ev.module;
  endif
endfunction
