## __labmate_mark__ (TAG): end a cell's output: TAG alone on a line on stdout and stderr.
function __labmate_mark__ (tag)
  fflush (stdout);
  fflush (stderr);
  fprintf (stdout, "\n%s\n", tag);
  fflush (stdout);
  fprintf (stderr, "\n%s\n", tag);
  fflush (stderr);
endfunction
