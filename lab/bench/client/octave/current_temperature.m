## -*- texinfo -*-
## @deftypefn {} {@var{celsius} =} current_temperature (@var{hs})
## The temperature of the heater-shaker @var{hs} (from load_module) now, in °C, as
## Opentrons' HeaterShakerContext.current_temperature.
## @seealso{set_and_wait_for_temperature}
## @end deftypefn
function celsius = current_temperature (hs)
  if (nargin != 1)
    print_usage ();
  endif
  m = __bench_find_module__ (hs, "heaterShakerModuleV1");
  celsius = 0;
  if (isfield (m, "temperature_c"))
    celsius = m.temperature_c;
  endif
endfunction
