## load_waste_chute: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function load_waste_chute (varargin)
  __bench_unsupported__ ("load_waste_chute");
endfunction
