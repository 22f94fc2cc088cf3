% label: healthy
% fault: none
% watch: loss decreasing
% runtime: 3
% what: least-squares linear regression (200 samples, 8 badly scaled features) by full-batch gradient descent with step 1/L; the loss decreases slowly and monotonically toward the optimum.
randn('state', 5);
n = 200; p = 8;
X = [ones(n, 1) randn(n, p - 1)] .* logspace(0, -1.3, p);   % badly scaled features: slow convergence
wtrue = linspace(-2, 2, p)' ./ logspace(0, -1.3, p)';
yv = X * wtrue + 0.3 * randn(n, 1);
L = max(eig(X' * X / n));
eta = 1 / L;
w = zeros(p, 1);
wstar = X \ yv;
lstar = 0.5 * mean((X * wstar - yv).^2);
for it = 1:3000
  g = X' * (X * w - yv) / n;
  w = w - eta * g;
  if mod(it, 25) == 0
    loss = 0.5 * mean((X * w - yv).^2);
    labmate_log('loss', loss);
    printf('iter %4d  objective %.10f  gap %.3e\n', it, loss, loss - lstar);
    pause(0.025);
  end
end
printf('final weights: %s\n', mat2str(w', 4));
