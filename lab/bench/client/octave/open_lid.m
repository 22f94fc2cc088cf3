## -*- texinfo -*-
## @deftypefn {} {} open_lid (@var{reader})
## Opentrons' AbsorbanceReaderContext.open_lid: the twin's reader has no lid, so nothing
## happens.
## @seealso{read}
## @end deftypefn
function open_lid (reader)
endfunction
