% label: faulty
% fault: nan
% runtime: 16
% what: fitting the rate of an exponential model y = exp(a x) to data by a damped Newton step that is 50 times too long, printing "epoch N loss L a A": from a = 3 the first steps overshoot (a jumps to -2, then 458), exp(a x) overflows to Inf, the next step is Inf/Inf = NaN, and the loop prints "loss NaN a NaN" for the rest of its 80 epochs.
x = linspace(0, 10, 50);
y = exp(0.3 * x);
a = 3; onset = false;
for epoch = 1:80
  r = exp(a * x) - y;
  loss = mean(r .^ 2);
  g = mean(2 * r .* x .* exp(a * x));
  H = mean(2 * x .^ 2 .* exp(2 * a * x));
  a = a - g / H * 50;
  if ~onset && isnan(loss)
    labmate_log('onset', 1);
    onset = true;
  end
  printf('epoch %d loss %g a %g\n', epoch, loss, a);
  pause(0.2);
end
