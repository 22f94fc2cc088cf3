## -*- texinfo -*-
## @deftypefn  {} {} load_liquid (@var{well}, @var{volume}, @var{liquid})
## Put @var{volume} µL of a liquid into @var{well} by hand, as Opentrons' Well.load_liquid.
## @var{liquid} is a species name (that species at 1 mol/L), or what it is made of: a struct
## or containers.Map of species to mol/L, or a cell @{species, mol/L, …@}; @{@} is a pure
## solvent.
## @seealso{load_labware, wells}
## @end deftypefn
function load_liquid (well, volume, liquid)
  if (nargin != 3)
    print_usage ();
  endif
  if (ischar (liquid))
    conc = containers.Map ({liquid}, {1});
  elseif (isstruct (liquid))
    conc = containers.Map (fieldnames (liquid), struct2cell (liquid));
  elseif (iscell (liquid))
    conc = containers.Map ("KeyType", "char", "ValueType", "any");
    for i = 1:2:numel (liquid)
      conc(liquid{i}) = liquid{i+1};
    endfor
  elseif (isobject (liquid))
    conc = liquid;
  else
    error ("load_liquid: LIQUID is a species name, a struct, a containers.Map or a cell {species, mol/L, ...}");
  endif
  a.well = well;
  a.volume = volume;
  a.concentrations = conc;
  __bench__ ("load_liquid", a);
endfunction
