## -*- texinfo -*-
## @deftypefn {} {@var{pct} =} yield_vs_limiting (@var{a}, @var{product}, @var{limiting})
## Percent yield in the analysis @var{a} (from analyze): the product's amount over the
## product's and the limiting reagent's.
## @seealso{analyze, amount_mM}
## @end deftypefn
function pct = yield_vs_limiting (a, product, limiting)
  if (nargin != 3)
    print_usage ();
  endif
  p = amount_mM (a, product);
  l = amount_mM (a, limiting);
  pct = 0;
  if (p + l != 0)
    pct = 100 * p / (p + l);
  endif
endfunction
