## -*- texinfo -*-
## @deftypefn  {} {} transfer (@var{pip}, @var{volume}, @var{source}, @var{dest})
## @deftypefnx {} {} transfer (@var{pip}, @var{volume}, @var{source}, @var{dest}, @var{new_tip})
## Move @var{volume} µL (a number, or one per transfer) from @var{source} to @var{dest}, as
## Opentrons' InstrumentContext.transfer: each a well or a cell array of wells (nested cells,
## such as @code{plate.rows(1:2:end)}, are flattened); @var{new_tip} is "once" (default),
## "always" or "never".
## @seealso{distribute, consolidate}
## @end deftypefn
function transfer (pip, volume, source, dest, new_tip)
  if (nargin < 4)
    print_usage ();
  elseif (nargin < 5)
    new_tip = "once";
  endif
  __bench_plan__ ("transfer", pip, volume, source, dest, new_tip);
endfunction
