% label: healthy
% fault: none
% watch: snr_gain_db > 3
% runtime: 3
% what: block-wise FFT low-pass filtering of a noisy 50 Hz + 120 Hz signal sampled at 2 kHz; each block's SNR improves by a steady ~7 dB.
rand('state', 11); randn('state', 11);
fs = 2000; N = 4096; fc = 200;
f = (0:N-1)' * fs / N;
mask = (f <= fc) | (f >= fs - fc);
for b = 1:60
  t = ((b - 1) * N + (0:N-1)') / fs;
  clean = sin(2*pi*50*t) + 0.5 * sin(2*pi*120*t + 0.3);
  noisy = clean + 0.8 * randn(N, 1);
  X = fft(noisy);
  filtered = real(ifft(X .* mask));
  snr_in = 10 * log10(sum(clean.^2) / sum((noisy - clean).^2));
  snr_out = 10 * log10(sum(clean.^2) / sum((filtered - clean).^2));
  labmate_log('snr_gain_db', snr_out - snr_in);
  printf('block %2d: snr_in=%.2f dB snr_out=%.2f dB\n', b, snr_in, snr_out);
  pause(0.05);
end
printf('filtering done\n');
