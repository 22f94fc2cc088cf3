% label: healthy
% fault: none
% runtime: 13
% what: cobweb model of a hog market (supply from last season's price, d/b = 0.93): the price overshoots the equilibrium in alternate seasons, excess_demand alternates in sign (-109.5, +101.8, ...) and its amplitude shrinks only 7% per season, to 0.07 after 103 seasons: oscillating but converging.
% cobweb model of a hog market: producers plan this season's supply from last season's price,
% demand D = a - b P, supply S = c + d P_prev with d/b = 0.93 < 1, so the price overshoots the
% equilibrium in alternate seasons but converges (slowly: the deviation shrinks 7% per season)
a = 200; bb = 2.0; c = 20; dd = 1.86;
Peq = (a - c) / (bb + dd);
P = 75.0;
printf('equilibrium price %.3f, start %.3f\n', Peq, P);
printf('season     price    supply    demand  excess_demand\n');
for s = 1:110
  S = c + dd * P;
  Pnew = (a - S) / bb;          % market clears on the demand curve
  D = a - bb * P;
  printf('%6d  %8.3f  %8.3f  %8.3f  %+12.4f\n', s, Pnew, S, D, D - S);
  fflush(stdout);
  P = Pnew;
  pause(0.1);
end
printf('final deviation from equilibrium: %.2e\n', abs(P - Peq));
