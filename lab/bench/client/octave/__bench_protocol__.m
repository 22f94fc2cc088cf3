## PROTOCOL = __bench_protocol__ (): what an Octave protocol's run (protocol) is given, as
## Opentrons gives def run(protocol) its ProtocolContext: the bench's context-level functions
## as fields (protocol.load_labware (...), protocol.load_instrument (...), ...). The pipette
## and module functions take the pipette or module first: transfer (p, ...).
function protocol = __bench_protocol__ ()
  protocol = struct ("load_labware", @load_labware, "load_instrument", @load_instrument,
                     "load_module", @load_module, "define_liquid", @define_liquid,
                     "load_liquid", @load_liquid, "delay", @delay, "comment", @comment,
                     "analyze", @analyze, "bench_command", @bench_command);
endfunction
