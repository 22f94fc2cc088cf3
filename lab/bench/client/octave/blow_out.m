## -*- texinfo -*-
## @deftypefn  {} {} blow_out (@var{pip})
## @deftypefnx {} {} blow_out (@var{pip}, @var{well})
## Blow what is left in the tip out into @var{well} (default: where the pipette is).
## @end deftypefn
function blow_out (pip, well)
  a.mount = pip.mount;
  if (nargin > 1)
    a.well = well;
  endif
  __bench__ ("blow_out", a);
endfunction
