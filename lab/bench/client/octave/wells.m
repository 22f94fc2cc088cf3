## -*- texinfo -*-
## @deftypefn  {} {@var{w} =} wells (@var{lw})
## @deftypefnx {} {@var{w} =} wells (@var{lw}, @var{name}, @dots{})
## The wells of labware @var{lw} in order (by column, as Opentrons' Labware.wells), or the
## wells named: one name gives a well, several a cell array. Unknown names are errors.
## @seealso{load_labware}
## @end deftypefn
function w = wells (lw, varargin)
  if (nargin < 1 || ! isstruct (lw) || ! isfield (lw, "wells"))
    print_usage ();
  endif
  if (nargin == 1)
    w = [lw.ordering{:}];
    return;
  endif
  w = cell (1, numel (varargin));
  for i = 1:numel (varargin)
    if (! isfield (lw.wells, varargin{i}))
      error ("wells: %s has no well '%s'", lw.name, varargin{i});
    endif
    w{i} = lw.wells.(varargin{i});
  endfor
  if (numel (w) == 1)
    w = w{1};
  endif
endfunction
