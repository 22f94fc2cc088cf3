## __labmate_save__ (FILE): save the base workspace's variables to FILE (save -binary), each
## one first tried alone against /dev/null: a variable save cannot write (a classdef object
## such as containers.Map, or a struct holding one) would otherwise end the whole save with a
## half-written file. Prints a labmate-snapshot report line per variable.
function __labmate_save__ (file)
  names = evalin ("base", "who");
  ok = {};
  for i = 1:numel (names)
    try
      evalin ("base", sprintf ("save ('-binary', '/dev/null', '%s');", names{i}));
      ok{end+1} = names{i};
    catch err
      reason = sprintf ("%s: %s", evalin ("base", sprintf ("class (%s)", names{i})), err.message);
      printf ("labmate-snapshot\tskipped\t%s\t%s\n", names{i}, regexprep (reason, '\s+', ' '));
    end_try_catch
  endfor
  if (isempty (ok))
    fclose (fopen (file, "w"));  # nothing to load: labmate does not ask for it
    return;
  endif
  args = sprintf (", '%s'", ok{:});
  evalin ("base", sprintf ("save ('-binary', '%s'%s);", strrep (file, "'", "''"), args));
  printf ("labmate-snapshot\tsaved\t%s\n", ok{:});
endfunction
