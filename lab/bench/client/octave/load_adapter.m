## load_adapter: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function load_adapter (varargin)
  __bench_unsupported__ ("load_adapter");
endfunction
