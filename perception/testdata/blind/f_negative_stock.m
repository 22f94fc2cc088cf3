% label: faulty
% fault: constraint
% runtime: 13
% what: a fish stock with logistic growth (r = 0.4 per year, carrying capacity 1000 t) under a constant harvest quota, integrated monthly with explicit Euler and no floor at zero: a quota of 80 t/yr is sustainable (from 900 t the stock settles toward 724 t), but the second scenario, an already depleted stock of 500 t under a quota of 120 t/yr (above the maximum sustainable yield of 100 t/yr), declines for 13 simulated years, crosses zero, and the model keeps "harvesting" a negative stock that falls ever faster (-51 t, -415 t, -1793 t over the next four years, then -8e14 t) until it overflows to -Inf at year 19 and stays there: a negative biomass for the last 17 years of the run.
r = 0.4; Kc = 1000; dt = 1 / 12;
for H = [80 120]
  if H < 100
    N = 900; years = 8;
  else
    N = 500; years = 30;
  end
  printf('--- scenario: quota H = %d t/yr\n', H);
  flag = false;
  for m = 1:(12 * years)
    N = N + dt * (r * N * (1 - N / Kc) - H);
    if H > 100 && ~flag && N < 0
      labmate_log('onset', 1);
      flag = true;
    end
    if mod(m, 2) == 0
      printf('year %6.2f   stock = %.5g t   harvest = %d t/yr\n', m / 12, N, H);
      fflush(stdout);
      pause(0.042);
    end
  end
end
