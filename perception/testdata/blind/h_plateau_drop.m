% label: healthy
% fault: none
% runtime: 11
% what: linear regression of a sensor calibration (3 inputs, 1 output) by a deep linear network (3-4-4-1, three weight layers) started from a small initialisation (2e-3) and trained by gradient descent: the loss sits at its starting value 2.6958 for 2300 of 3200 epochs (70% of the run) (the origin is a saddle of the deep product, and the small weights grow only slowly), then drops within a couple of hundred epochs to the noise floor (1.1e-5, where it stays), a normal long plateau before a drop.
randn('seed', 4);
n = 300;
X = randn(n, 3);
y = X * [2.0; -1.0; 0.5] + 0.005 * randn(n, 1);
W1 = 2e-3 * randn(4, 3); W2 = 2e-3 * randn(4, 4); W3 = 2e-3 * randn(1, 4);
lr = 0.05;
printf('deep linear network 3-4-4-1, init 2e-3, lr = %g\n', lr);
for epoch = 1:3200
  P = W3 * W2 * W1;
  r = X * P' - y;
  loss = 0.5 * mean(r.^2);
  G = (r' * X) / n;
  g3 = G * (W2 * W1)';
  g2 = W3' * G * W1';
  g1 = (W3 * W2)' * G;
  W1 = W1 - lr * g1; W2 = W2 - lr * g2; W3 = W3 - lr * g3;
  if mod(epoch, 25) == 0
    printf('epoch %5d   loss = %.6e\n', epoch, loss);
    fflush(stdout);
    pause(0.03);
  end
end
