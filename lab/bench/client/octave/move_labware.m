## move_labware: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function move_labware (varargin)
  __bench_unsupported__ ("move_labware");
endfunction
