## __bench_plan__ (NAME, PIP, VOLUME, SOURCE, DEST, NEW_TIP): a transfer, distribute or
## consolidate command.
function __bench_plan__ (name, pip, volume, source, dest, new_tip)
  a.source = flat (source);
  a.dest = flat (dest);
  a.new_tip = new_tip;
  if (isscalar (volume))
    a.volume = volume;
  else
    a.volumes = num2cell (volume(:)');
  endif
  a.mount = pip.mount;
  __bench__ (name, a);
endfunction

function w = flat (x)
  if (ischar (x))
    w = {x};
  elseif (iscell (x))
    w = {};
    for i = 1:numel (x)
      w = [w, flat(x{i})];
    endfor
  else
    error ("the wells are a well (\"plate/A1\", plate.wells.A1) or a cell array of wells");
  endif
endfunction
