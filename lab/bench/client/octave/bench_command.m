## -*- texinfo -*-
## @deftypefn {} {@var{event} =} bench_command (@var{name}, @var{args})
## Send any command of labmate's bench twin, as a struct of its arguments, and return what
## it did: e.g. @code{bench_command ("load_module", struct ("module",
## "heaterShakerModuleV1", "slot", "4"))}, @code{bench_command ("hs_set_temperature",
## struct ("slot", "4", "celsius", 90))}, @code{bench_command ("delay", struct ("minutes",
## 60))}, @code{bench_command ("analyze", struct ("well", "plate/A1"))},
## @code{bench_command ("deck", struct ())}. A refused command is an error with the twin's
## message.
## @seealso{load_labware, load_instrument}
## @end deftypefn
function ev = bench_command (name, args)
  if (nargin < 1)
    print_usage ();
  elseif (nargin < 2)
    args = struct ();
  endif
  ev = __bench__ (name, args).event;
endfunction
