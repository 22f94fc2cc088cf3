## -*- texinfo -*-
## @deftypefn  {} {} consolidate (@var{pip}, @var{volume}, @var{source}, @var{dest})
## @deftypefnx {} {} consolidate (@var{pip}, @var{volume}, @var{source}, @var{dest}, @var{new_tip})
## Move @var{volume} µL from each of the @var{source} wells to one @var{dest} well, several per dispense. Wells as transfer takes them.
## @seealso{transfer}
## @end deftypefn
function consolidate (pip, volume, source, dest, new_tip)
  if (nargin < 4)
    print_usage ();
  elseif (nargin < 5)
    new_tip = "once";
  endif
  __bench_plan__ ("consolidate", pip, volume, source, dest, new_tip);
endfunction
