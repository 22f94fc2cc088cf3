% label: healthy
% fault: none
% watch: balance < 1e17
% runtime: 3
% what: compound interest at 25% a year on 1000, compounded monthly for 120 years and reported every 5 years (a factor 3.4 each time): the balance grows exponentially from 1e3 to 8e15, as declared with --watch 'balance < 1e16', which replaces the divergence detector for that series.
balance = 1000;
for year = 1:120
  for month = 1:12
    balance = balance * (1 + 0.25 / 12);
  end
  if mod(year, 5) == 0
    printf('year %d: balance = %.6e\n', year, balance);
    labmate_log('balance', balance);
    pause(0.1);
  end
end
printf('final balance after 120 years: %.3e\n', balance);
