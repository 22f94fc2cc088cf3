## -*- texinfo -*-
## @deftypefn  {} {@var{liquid} =} define_liquid (@var{name})
## @deftypefnx {} {@var{liquid} =} define_liquid (@var{name}, @var{description}, @var{display_color}, @var{concentrations})
## A liquid for load_liquid, as Opentrons' ProtocolContext.define_liquid: by default
## @var{name} is one species at 1 mol/L; @var{concentrations} (a struct, containers.Map or
## cell @{species, mol/L, …@}; @{@} for a pure solvent) say what it is made of.
## @seealso{load_liquid}
## @end deftypefn
function liquid = define_liquid (name, description, display_color, concentrations)
  if (nargin < 1 || ! ischar (name))
    print_usage ();
  endif
  liquid = name;
  if (nargin > 3)
    liquid = concentrations;
  endif
endfunction
