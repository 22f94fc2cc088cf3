## __labmate_loop__ (TAG): labmate's Octave driver. It answers TAG and then reads cell frames
## from stdin and runs them itself, without going back to Octave's prompt: interactive Octave
## rescans its whole load path after every prompt line (about 5 ms), the loop does not.
## An interrupt unwinds to the prompt; labmate then sends __labmate_loop__ again.
function __labmate_loop__ (tag)
  __labmate_end__ (tag, "ready", 0, "");
  __labmate_mark__ (tag);
  if (numel (dbstack ()) > 1)
    return;  # a repeated recovery line read by a running loop: answered, do not nest
  endif
  while (true)
    try
      frame = input ("", "s");
    catch
      return;  # stdin closed: labmate is gone
    end_try_catch
    try
      eval (frame);
    catch err
      fprintf (stderr, "labmate driver: %s\n", err.message);
    end_try_catch
  endwhile
endfunction
