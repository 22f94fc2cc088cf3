## -*- texinfo -*-
## @deftypefn  {} {} open_labware_latch (@var{hs})
## @deftypefnx {} {@var{state} =} open_labware_latch (@var{hs})
## The heater-shaker @var{hs} (from load_module). Open the labware latch (not while shaking). @var{state} is the module's state
## (@code{temperature_c}, @code{shake_rpm}, @code{latched}, @code{held_min}), as Opentrons'
## HeaterShakerContext.open_labware_latch.
## @seealso{load_module, delay, current_temperature}
## @end deftypefn
function state = open_labware_latch (hs)
  if (nargin != 1)
    print_usage ();
  endif
  ev = __bench_module__ (hs, "heaterShakerModuleV1", "hs_open_latch");
  if (nargout > 0)
    state = ev.module;
  endif
endfunction
