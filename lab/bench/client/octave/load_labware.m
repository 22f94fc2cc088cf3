## -*- texinfo -*-
## @deftypefn  {} {@var{lw} =} load_labware (@var{load_name}, @var{slot})
## @deftypefnx {} {@var{lw} =} load_labware (@var{load_name}, @var{slot}, @var{label})
## Load labware on the session's bench, as the Opentrons ProtocolContext.load_labware does.
## @var{lw} is a struct: @code{name} (how commands name it: @var{label} when it is an
## identifier, else the slot), @code{load_name}, @code{display_name}, @code{slot},
## @code{is_tiprack}, @code{wells} (well name to well, e.g. @code{lw.wells.A1}),
## @code{ordering} (the wells by column), @code{columns} and @code{rows} (cell arrays of
## wells, @code{lw.rows@{1@}} is row A). A well is the string "@var{name}/@var{well}",
## what the other bench functions take. @var{slot} may be a module from load_module: the
## labware sits on it, as Opentrons' module.load_labware.
## @seealso{load_instrument, wells}
## @end deftypefn
function lw = load_labware (load_name, slot, label)
  if (nargin < 2)
    print_usage ();
  endif
  a.load_name = load_name;
  if (isstruct (slot) && isfield (slot, "model"))
    slot = slot.slot;  # a module's
  endif
  if (isnumeric (slot))
    slot = sprintf ("%d", slot);
  endif
  a.slot = slot;
  if (nargin > 2 && ischar (label) && ! isempty (regexp (label, '^[A-Za-z_]\w*$', "once")))
    a.label = label;  # the twin's name for it; otherwise its slot
  endif
  r = __bench__ ("load_labware", a).labware;
  lw = __bench_labware__ (r, slot);
endfunction
