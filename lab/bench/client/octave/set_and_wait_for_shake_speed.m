## -*- texinfo -*-
## @deftypefn  {} {} set_and_wait_for_shake_speed (@var{hs}, @var{rpm})
## @deftypefnx {} {@var{state} =} set_and_wait_for_shake_speed (@var{hs}, @var{rpm})
## The heater-shaker @var{hs} (from load_module). Shake the plate at @var{rpm} (the latch must be closed). @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.set_and_wait_for_shake_speed.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = set_and_wait_for_shake_speed (hs, rpm)
  if (nargin != 2)
    print_usage ();
  endif
  ev = __bench_module__ (hs, "heaterShakerModuleV1", "hs_set_shake_speed", struct ("rpm", round (rpm)));
  if (nargout > 0)
    state = ev.module;
  endif
endfunction
