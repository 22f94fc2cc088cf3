## -*- texinfo -*-
## @deftypefn  {} {@var{r} =} read (@var{reader})
## @deftypefnx {} {@var{r} =} read (@var{reader}, @var{labware})
## Read the absorbance of every well of @var{labware} (default: the labware in the reader's
## slot) with the plate reader @var{reader} (from load_module and initialize), as Opentrons'
## AbsorbanceReaderContext.read. @var{r} is a struct: @code{wavelengths_nm} (1×k),
## @code{wells} (n×1 cell of wells, "plate/A1", in the labware's order), @code{od} (n×k
## optical densities) and @code{od_by_well} (well name to its 1×k ODs: @code{r.od_by_well.A1}).
## @seealso{load_module, initialize}
## @end deftypefn
function r = read (reader, labware)
  if (nargin < 1 || nargin > 2)
    print_usage ();
  endif
  if (nargin < 2)
    [~, name] = __bench_find_module__ (reader, "absorbanceReaderV1");
    if (isempty (name))
      error ("read: no labware is in the reader's slot %d: read (reader, labware)", reader.slot);
    endif
  elseif (isstruct (labware) && isfield (labware, "name"))
    name = labware.name;
  else
    error ("read: LABWARE is labware from load_labware");
  endif
  rd = __bench_module__ (reader, "absorbanceReaderV1", "read_plate", struct ("well", name)).reading;
  r.wavelengths_nm = rd.wavelengths_nm(:)';
  n = numel (rd.wells);
  r.wells = cell (n, 1);
  r.od = zeros (n, numel (r.wavelengths_nm));
  r.od_by_well = struct ();
  for i = 1:n
    if (iscell (rd.wells))
      w = rd.wells{i};
    else
      w = rd.wells(i);
    endif
    r.wells{i} = [name "/" w.well];
    r.od(i,:) = w.od(:)';
    r.od_by_well.(w.well) = w.od(:)';
  endfor
endfunction
