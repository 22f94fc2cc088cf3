## __labmate_end__ (TAG, STATUS, LINE, MSG): the end record of a cell on the side channel.
function __labmate_end__ (tag, status, line, msg)
  msg = strrep (strrep (strrep (msg, "\\", "\\\\"), "\n", "\\n"), "\t", "\\t");
  fid = __labmate_fd__ ();
  fprintf (fid, "E\t%s\t%s\t%d\t%s\n", tag, status, line, msg);
  fflush (fid);
endfunction
