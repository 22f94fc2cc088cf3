## -*- texinfo -*-
## @deftypefn {} {} drop_tip (@var{pip})
## Drop the pipette's tip in the trash.
## @seealso{pick_up_tip, return_tip}
## @end deftypefn
function drop_tip (pip)
  __bench__ ("drop_tip", struct ("mount", pip.mount));
endfunction
