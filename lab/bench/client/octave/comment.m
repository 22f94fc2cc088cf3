## -*- texinfo -*-
## @deftypefn {} {} comment (@var{msg})
## Print @var{msg} in the protocol's output, as Opentrons' ProtocolContext.comment.
## @end deftypefn
function comment (msg)
  printf ("%s\n", msg);
endfunction
