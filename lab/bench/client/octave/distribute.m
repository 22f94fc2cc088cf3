## -*- texinfo -*-
## @deftypefn  {} {} distribute (@var{pip}, @var{volume}, @var{source}, @var{dest})
## @deftypefnx {} {} distribute (@var{pip}, @var{volume}, @var{source}, @var{dest}, @var{new_tip})
## Move @var{volume} µL from one @var{source} well to each of the @var{dest} wells, several per aspiration. Wells as transfer takes them.
## @seealso{transfer}
## @end deftypefn
function distribute (pip, volume, source, dest, new_tip)
  if (nargin < 4)
    print_usage ();
  elseif (nargin < 5)
    new_tip = "once";
  endif
  __bench_plan__ ("distribute", pip, volume, source, dest, new_tip);
endfunction
