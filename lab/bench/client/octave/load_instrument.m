## -*- texinfo -*-
## @deftypefn  {} {@var{pip} =} load_instrument (@var{name}, @var{mount})
## @deftypefnx {} {@var{pip} =} load_instrument (@var{name}, @var{mount}, @var{tip_racks})
## Load a pipette (e.g. "p300_single_gen2", "p20_multi_gen2") on @var{mount} ("left" or
## "right"), picking tips from @var{tip_racks}: labware from load_labware, or a cell array of
## them. @var{pip} is a struct (@code{name}, @code{mount}) that pick_up_tip, aspirate,
## dispense, mix, blow_out, drop_tip, return_tip and transfer take first.
## @seealso{load_labware, pick_up_tip, transfer}
## @end deftypefn
function pip = load_instrument (name, mount, tip_racks)
  if (nargin < 2)
    print_usage ();
  endif
  racks = {};
  if (nargin > 2)
    if (isstruct (tip_racks))
      tip_racks = num2cell (tip_racks);
    endif
    racks = cellfun (@(r) r.name, tip_racks, "UniformOutput", false);
  endif
  a.instrument = name;
  a.mount = mount;
  a.tip_racks = racks(:)';
  __bench__ ("load_instrument", a);
  pip = struct ("name", name, "mount", mount);
endfunction
