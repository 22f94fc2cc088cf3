## EV = __bench_module__ (MOD, MODEL, COMMAND, ARGS): send a module command to the module
## MOD (from load_module), which must be a MODEL, and return the twin's event.
function ev = __bench_module__ (mod, model, command, args)
  caller = dbstack ()(2).name;
  if (! isstruct (mod) || ! isfield (mod, "model") || ! isfield (mod, "slot"))
    error ("%s: the first argument is a module from load_module", caller);
  elseif (! strcmp (mod.model, model))
    error ("%s: the module in slot %d is a %s, not a %s", caller, mod.slot, mod.model, model);
  endif
  if (nargin < 4)
    args = struct ();
  endif
  args.slot = sprintf ("%d", mod.slot);
  ev = __bench__ (command, args).event;
endfunction
