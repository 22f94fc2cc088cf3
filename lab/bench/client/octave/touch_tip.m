## touch_tip: an Opentrons Protocol API name labmate's bench twin does not model; calling it is
## an error that says so.
function touch_tip (varargin)
  __bench_unsupported__ ("touch_tip");
endfunction
