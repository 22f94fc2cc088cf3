## -*- texinfo -*-
## @deftypefn  {} {} pick_up_tip (@var{pip})
## @deftypefnx {} {} pick_up_tip (@var{pip}, @var{well})
## Pick up the next tip of the pipette's tip racks, or the tip in @var{well} of a tip rack.
## @seealso{load_instrument, drop_tip, return_tip}
## @end deftypefn
function pick_up_tip (pip, well)
  a.mount = pip.mount;
  if (nargin > 1)
    a.well = well;
  endif
  __bench__ ("pick_up_tip", a);
endfunction
