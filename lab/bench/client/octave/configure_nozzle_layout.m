## configure_nozzle_layout: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function configure_nozzle_layout (varargin)
  __bench_unsupported__ ("configure_nozzle_layout");
endfunction
