## -*- texinfo -*-
## @deftypefn {} {} return_tip (@var{pip})
## Put the pipette's tip back where it came from.
## @seealso{pick_up_tip, drop_tip}
## @end deftypefn
function return_tip (pip)
  __bench__ ("return_tip", struct ("mount", pip.mount));
endfunction
