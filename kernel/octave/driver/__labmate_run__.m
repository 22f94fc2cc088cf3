## __labmate_run__ (TAG, FILE, REHASH): run one cell file in the base workspace, print its
## error the way Octave does, and end with TAG's markers.
function __labmate_run__ (tag, file, rehash_first)
  if (rehash_first)
    rehash ();  # the cell may call function files the previous cells changed
  endif
  try
    evalin ("base", ["source ('" strrep(file, "'", "''") "');"]);
  catch err
    try
      [msg, line, frames] = describe (err, file);
    catch derr
      ## A workspace file that shadows a function the description calls (rows.m shadows
      ## rows, which strtrim calls): the cell must still end.
      msg = sprintf ("%s (labmate's driver could not say where: %s)", err.message, derr.message);
      line = 0;
      frames = [];
    end_try_catch
    # The end record goes first: the error text below may make labmate interrupt (hot-fix),
    # and the record must already say that the cell failed on its own.
    __labmate_end__ (tag, "error", line, msg);
    fprintf (stderr, "error: %s\n", msg);
    if (! isempty (frames))
      fprintf (stderr, "error: called from\n");
      for i = 1:numel (frames)
        name = frames(i).name;
        if (strcmp (name, file))
          name = "cell";  # the cell script itself; functions it defines keep their names
        endif
        fprintf (stderr, "    %s at line %d column %d\n", name, frames(i).line, frames(i).column);
      endfor
    endif
    __labmate_mark__ (tag);
    return;
  end_try_catch
  __labmate_end__ (tag, "ok", 0, "");
  __labmate_mark__ (tag);
endfunction

## [MSG, LINE, FRAMES] = describe (ERR, FILE): the error of the cell FILE as labmate reports it.
function [msg, line, frames] = describe (err, file)
  msg = err.message;
  if (strncmp (msg, "source: error sourcing file", 27))
    try  # Octave 7's source hides the parse error: parse again to get it
      __parse_file__ (file);
    catch perr
      msg = perr.message;
    end_try_catch
  endif
  ## Built-in functions only (regexprep, not strtrim): a workspace file may shadow m-files.
  msg = regexprep (strrep (msg, ["of file " file], "of the cell"), '^\s+|\s+$', "");
  frames = err.stack(! strncmp ({err.stack.name}, "__labmate_", 10));
  line = 0;
  for i = 1:numel (frames)
    if (strcmp (frames(i).file, file))
      line = frames(i).line;  # the innermost frame in the cell
      break;
    endif
  endfor
  if (line == 0)
    tok = regexp (msg, 'near line (\d+)', "tokens", "once");
    if (! isempty (tok))
      line = str2double (tok{1});
    endif
  endif
endfunction
