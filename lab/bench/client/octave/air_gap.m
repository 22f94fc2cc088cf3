## air_gap: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function air_gap (varargin)
  __bench_unsupported__ ("air_gap");
endfunction
