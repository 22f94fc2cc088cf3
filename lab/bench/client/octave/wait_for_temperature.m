## -*- texinfo -*-
## @deftypefn {} {} wait_for_temperature (@var{hs})
## Opentrons' HeaterShakerContext.wait_for_temperature: the twin reaches its temperature at
## once, so nothing happens.
## @seealso{set_target_temperature}
## @end deftypefn
function wait_for_temperature (hs)
endfunction
