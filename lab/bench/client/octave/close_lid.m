## -*- texinfo -*-
## @deftypefn {} {} close_lid (@var{reader})
## Opentrons' AbsorbanceReaderContext.close_lid: the twin's reader has no lid, so nothing
## happens.
## @seealso{read}
## @end deftypefn
function close_lid (reader)
endfunction
