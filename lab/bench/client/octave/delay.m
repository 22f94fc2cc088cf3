## -*- texinfo -*-
## @deftypefn  {} {} delay (@var{seconds})
## @deftypefnx {} {} delay (@var{seconds}, @var{minutes})
## @deftypefnx {} {} delay ("minutes", @var{minutes}, "seconds", @var{seconds})
## Time passing on the twin (not waited), as Opentrons' ProtocolContext.delay: every
## heater-shaker holds its plate that long, and the reactions its wells map to run once held
## at their temperature long enough in all.
## @seealso{load_module, set_and_wait_for_temperature, analyze}
## @end deftypefn
function delay (varargin)
  seconds = 0;
  minutes = 0;
  if (nargin > 0 && ischar (varargin{1}))
    for i = 1:2:nargin
      switch (varargin{i})
        case "seconds"
          seconds = varargin{i+1};
        case "minutes"
          minutes = varargin{i+1};
        otherwise
          error ("delay: '%s' is not seconds or minutes", varargin{i});
      endswitch
    endfor
  elseif (nargin > 0)
    seconds = varargin{1};
    if (nargin > 1)
      minutes = varargin{2};
    endif
  endif
  total = seconds / 60 + minutes;
  printf ("delay %g min (the twin does not wait)\n", total);
  if (total > 0)
    __bench__ ("delay", struct ("minutes", total));
  endif
endfunction
