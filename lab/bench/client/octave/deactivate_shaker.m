## -*- texinfo -*-
## @deftypefn  {} {} deactivate_shaker (@var{hs})
## @deftypefnx {} {@var{state} =} deactivate_shaker (@var{hs})
## The heater-shaker @var{hs} (from load_module). Stop shaking. @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.deactivate_shaker.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = deactivate_shaker (hs)
  if (nargin != 1)
    print_usage ();
  endif
  ev = __bench_module__ (hs, "heaterShakerModuleV1", "hs_deactivate_shaker");
  if (nargout > 0)
    state = ev.module;
  endif
endfunction
