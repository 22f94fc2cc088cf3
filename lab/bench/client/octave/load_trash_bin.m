## load_trash_bin: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function load_trash_bin (varargin)
  __bench_unsupported__ ("load_trash_bin");
endfunction
