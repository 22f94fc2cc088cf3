## set_rail_lights: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function set_rail_lights (varargin)
  __bench_unsupported__ ("set_rail_lights");
endfunction
