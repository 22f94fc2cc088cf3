% label: healthy
% fault: none
% runtime: 6
% what: damped Newton (fixed damping 0.08, as used for a poorly scaled model) for the equilibrium of a 3-reaction gas-phase system in log-concentration variables: the residual ||F|| falls slowly but steadily, by 8% per iteration, over 120 iterations from 2.3 to 2e-4 (linear, not quadratic, convergence because of the damping), never increasing; then a final undamped polish converges.
K = [2.5; 0.4; 8.0];
S = [-1 -1 1 0 0; 0 -1 -1 1 0; -1 0 0 -1 1];
tot = [1.0 1.2];
F = @(y) [S * y - log(K); exp(y(1)) + exp(y(3)) + exp(y(4)) + exp(y(5)) - tot(1); exp(y(2)) + exp(y(3)) + 2 * exp(y(4)) + exp(y(5)) - tot(2)];
J = @(y) [S; [exp(y(1)) 0 exp(y(3)) exp(y(4)) exp(y(5))]; [0 exp(y(2)) exp(y(3)) 2*exp(y(4)) exp(y(5))]];
y = log([0.3; 0.3; 0.3; 0.3; 0.3]);
for it = 1:120
  f = F(y);
  printf('iter %3d   ||F|| = %.5e\n', it, norm(f));
  fflush(stdout);
  pause(0.03);
  y = y - 0.08 * (J(y) \ f);
end
for it = 1:5
  y = y - J(y) \ F(y);
end
printf('after undamped polish: ||F|| = %.3e\n', norm(F(y)));
printf('equilibrium concentrations: %s\n', mat2str(exp(y'), 4));
