## -*- texinfo -*-
## @deftypefn  {} {} labmate_log (@var{name}, @var{value})
## @deftypefnx {} {} labmate_log (@var{name}, @var{value}, @var{t})
## Record a telemetry sample for labmate: @var{value} is a number or a vector, @var{t} an
## optional simulation time. Samples go to labmate's side channel, never to stdout.
## @end deftypefn
function labmate_log (name, value, t)
  if (nargin < 2 || ! ischar (name) || isempty (name))
    print_usage ();
  endif
  if (isempty (value) || ! (isnumeric (value) || islogical (value)))
    error ("labmate_log: VALUE of '%s' must be a non-empty number or vector", name);
  endif
  ts = "";
  if (nargin > 2)
    ts = sprintf ("%.17g", t);
  endif
  fid = __labmate_fd__ ();
  fprintf (fid, "S\t%s\t%s\t%s\n", regexprep (name, '\s', '_'), ts, sprintf ("%.17g ", real (double (value(:)))));
  fflush (fid);
endfunction
