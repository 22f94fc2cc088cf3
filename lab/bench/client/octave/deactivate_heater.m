## -*- texinfo -*-
## @deftypefn  {} {} deactivate_heater (@var{hs})
## @deftypefnx {} {@var{state} =} deactivate_heater (@var{hs})
## The heater-shaker @var{hs} (from load_module). Stop heating: the plate is back at ambient temperature. @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.deactivate_heater.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = deactivate_heater (hs)
  if (nargin != 1)
    print_usage ();
  endif
  ev = __bench_module__ (hs, "heaterShakerModuleV1", "hs_deactivate_heater");
  if (nargout > 0)
    state = ev.module;
  endif
endfunction
