## __labmate_mark__ (TAG, STATUS, LINE, MSG): end a cell: TAG alone on a line on stdout and
## stderr, and the end record on the side channel.
function __labmate_mark__ (tag, status, line, msg)
  fflush (stdout);
  fflush (stderr);
  fprintf (stdout, "\n%s\n", tag);
  fflush (stdout);
  fprintf (stderr, "\n%s\n", tag);
  fflush (stderr);
  msg = strrep (strrep (strrep (msg, "\\", "\\\\"), "\n", "\\n"), "\t", "\\t");
  fid = __labmate_fd__ ();
  fprintf (fid, "E\t%s\t%s\t%d\t%s\n", tag, status, line, msg);
  fflush (fid);
endfunction
