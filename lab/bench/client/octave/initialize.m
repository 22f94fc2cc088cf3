## -*- texinfo -*-
## @deftypefn {} {} initialize (@var{reader}, @var{mode}, @var{wavelengths})
## Set the plate reader @var{reader} (from load_module) to read @var{mode} ("single" or
## "multi") at @var{wavelengths} (nm, a number or a vector), as Opentrons'
## AbsorbanceReaderContext.initialize.
## @seealso{load_module, read}
## @end deftypefn
function initialize (reader, mode, wavelengths)
  if (nargin != 3)
    print_usage ();
  endif
  __bench_module__ (reader, "absorbanceReaderV1", "reader_initialize",
                    struct ("mode", mode, "wavelengths", {num2cell(double (wavelengths(:)'))}));
endfunction
