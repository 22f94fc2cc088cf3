## [NUM, DEN] = iirnotch (W0, BW)
## [NUM, DEN] = iirnotch (W0, BW, AB)
##
## A second-order IIR notch filter, as MATLAB's iirnotch designs it. labmate's implementation:
## Octave's signal package (1.4.3) has no iirnotch. It sits at the END of the kernel's load
## path, so an iirnotch that a package or your own path provides takes precedence.
##
## W0 is the notch frequency and BW the bandwidth, both normalised so that 1 is the Nyquist
## frequency (pi rad/sample): for a sampling rate FS and a notch at F0 Hz with quality factor Q,
## W0 = F0/(FS/2) and BW = W0/Q. BW is measured AB dB below the unity passband (default
## AB = 10*log10(2), the -3 dB points). The design is the bilinear-transform notch:
##   Gb = 10^(-AB/20),  beta = sqrt(1 - Gb^2)/Gb * tan(BW*pi/2),  g = 1/(1 + beta)
##   NUM = g * [1, -2*cos(W0*pi), 1]
##   DEN = [1, -2*g*cos(W0*pi), 2*g - 1]
## Its zeros lie on the unit circle at exp(+-j*W0*pi) (infinite attenuation at W0), its gain is
## 1 at DC and at Nyquist, and |H| = Gb exactly at the two band edges, BW*pi apart.
##
## Example:  [b, a] = iirnotch (60/(1000/2), 60/(1000/2)/35);  y = filter (b, a, x);
function [num, den] = iirnotch (w0, bw, ab)
  if (nargin < 2 || nargin > 3)
    print_usage ();
  endif
  if (nargin < 3)
    ab = 10 * log10 (2);
  endif
  if (! (isscalar (w0) && isreal (w0) && w0 > 0 && w0 < 1))
    error ("iirnotch: W0 must be a scalar in (0, 1), normalised to the Nyquist frequency");
  endif
  if (! (isscalar (bw) && isreal (bw) && bw > 0 && bw < 1))
    error ("iirnotch: BW must be a scalar in (0, 1), normalised to the Nyquist frequency");
  endif
  if (! (isscalar (ab) && isreal (ab) && ab > 0))
    error ("iirnotch: AB must be a positive scalar (dB)");
  endif
  gb = 10 ^ (-ab / 20);
  beta = sqrt (1 - gb ^ 2) / gb * tan (bw * pi / 2);
  g = 1 / (1 + beta);
  c = cos (w0 * pi);
  num = g * [1, -2*c, 1];
  den = [1, -2*g*c, 2*g - 1];
endfunction
