% label: faulty
% fault: nan
% runtime: 12
% what: log-likelihood of an ion-channel recording (two-state hidden Markov model, open/closed, Gaussian current noise) by the forward algorithm without scaling, printed as the recording is processed in blocks of 25 samples: the unnormalised forward variables shrink by ~0.25 per sample and underflow to exactly 0 after about 540 samples, so loglik = log(sum(alpha)) becomes -Inf and stays -Inf for the remaining 70% of the recording, with the open probability P(open) turning NaN (0/0).
rand('seed', 3); randn('seed', 3);
P = [0.95 0.05; 0.10 0.90];
mu = [0 2.0]; sig = 0.8;
T = 2000;
s = zeros(1, T); s(1) = 1;
for t = 2:T
  s(t) = 1 + (rand() < P(s(t-1), 2));
end
z = mu(s) + sig * randn(1, T);
b = @(zt) exp(-0.5 * ((zt - mu) / sig).^2) / (sqrt(2 * pi) * sig);
alpha = [0.5 0.5] .* b(z(1));
flag = false;
printf('%8s %14s %10s\n', 'samples', 'loglik', 'P(open)');
for t = 2:T
  alpha = (alpha * P) .* b(z(t));
  if mod(t, 25) == 0
    ll = log(sum(alpha));
    popen = alpha(2) / sum(alpha);
    if ~flag && isinf(ll)
      labmate_log('onset', 1);
      flag = true;
    end
    printf('%8d   loglik = %g   P(open) = %.4f\n', t, ll, popen);
    fflush(stdout);
    pause(0.12);
  end
end
