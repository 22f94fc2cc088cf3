## [M, LABWARE] = __bench_find_module__ (MOD, MODEL): the state of module MOD (from load_module),
## a MODEL, on the bench now, and the name of the labware in its slot ("" when none).
function [m, labware] = __bench_find_module__ (mod, model)
  caller = dbstack ()(2).name;
  if (! isstruct (mod) || ! isfield (mod, "model") || ! isfield (mod, "slot") || ! strcmp (mod.model, model))
    error ("%s: the first argument is a %s from load_module", caller, model);
  endif
  ev = __bench__ ("deck", struct ()).event;
  m = [];
  for i = 1:numel (field (ev, "modules"))
    x = item (ev.modules, i);
    if (x.slot == mod.slot)
      m = x;
    endif
  endfor
  if (isempty (m))
    error ("%s: the bench has no module in slot %d", caller, mod.slot);
  endif
  labware = "";
  for i = 1:numel (field (ev, "labware"))
    x = item (ev.labware, i);
    if (strcmp (num2str (x.slot), num2str (mod.slot)))
      labware = x.name;
    endif
  endfor
endfunction

function v = field (s, name)
  v = [];
  if (isfield (s, name))
    v = s.(name);
  endif
endfunction

function x = item (v, i)
  if (iscell (v))
    x = v{i};
  else
    x = v(i);
  endif
endfunction
