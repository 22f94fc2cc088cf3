# label: healthy
# fault: none
# watch: snr_gain_db > 3
# runtime: 3
# what: streaming FFT band-pass (40-160 Hz) of a noisy two-tone signal with mains hum, block by block with numpy.fft.rfft; each block gains ~8-10 dB of SNR.
import time
import numpy as np

rng = np.random.default_rng(7)
fs, N = 2000.0, 4096
freqs = np.fft.rfftfreq(N, 1 / fs)
band = (freqs >= 40) & (freqs <= 160)
for b in range(60):
    t = (b * N + np.arange(N)) / fs
    clean = np.sin(2 * np.pi * 60 * t) + 0.4 * np.sin(2 * np.pi * 130 * t)
    noisy = clean + 0.7 * rng.standard_normal(N) + 0.3 * np.sin(2 * np.pi * 400 * t)
    filtered = np.fft.irfft(np.fft.rfft(noisy) * band, n=N)
    snr_in = 10 * np.log10(np.sum(clean ** 2) / np.sum((noisy - clean) ** 2))
    snr_out = 10 * np.log10(np.sum(clean ** 2) / np.sum((filtered - clean) ** 2))
    labmate.log("snr_gain_db", snr_out - snr_in)
    print(f"block {b:2d}: snr_in={snr_in:.2f} dB snr_out={snr_out:.2f} dB")
    time.sleep(0.05)
print("done")
