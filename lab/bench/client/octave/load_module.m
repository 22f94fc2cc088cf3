## -*- texinfo -*-
## @deftypefn {} {@var{mod} =} load_module (@var{name}, @var{slot})
## Load a module in a deck slot, as Opentrons' ProtocolContext.load_module:
## "heaterShakerModuleV1" (set_and_wait_for_temperature, set_and_wait_for_shake_speed,
## deactivate_heater, deactivate_shaker, open_labware_latch, close_labware_latch,
## current_temperature) or "absorbanceReaderV1" (initialize, read, open_lid, close_lid).
## @var{mod} is a struct (@code{model}, @code{slot}) those functions take first; labware is
## put on it with @code{load_labware (@var{load_name}, @var{mod}, @var{label})}.
## @seealso{load_labware, delay, analyze}
## @end deftypefn
function mod = load_module (name, slot)
  if (nargin != 2)
    print_usage ();
  endif
  known = {"heaterShakerModuleV1", "absorbanceReaderV1"};
  if (! ischar (name) || ! any (strcmp (name, known)))
    error ("labmate:bench:unsupported", "load_module is not supported by labmate's bench twin for '%s' (supported modules: %s)",
           num2str (name), strjoin (known, ", "));
  endif
  if (ischar (slot))
    slot = str2double (slot);
  endif
  __bench__ ("load_module", struct ("module", name, "slot", sprintf ("%d", slot)));
  mod = struct ("model", name, "slot", slot);
endfunction
