% label: faulty
% fault: stagnation
% runtime: 26
% what: bisection for cos(x) = x with a tolerance of 1e-20, below the spacing of doubles near 0.74: after ~53 halvings the bracket cannot shrink any more and the loop keeps printing the same midpoint and width until its iteration cap.
f = @(x) cos(x) - x;
a = 0; b = 1; tol = 1e-20;
it = 0;
announced = false;
while (b - a) > tol && it < 520
  it = it + 1;
  m = (a + b) / 2;
  olda = a; oldb = b;
  if sign(f(m)) == sign(f(a))
    a = m;
  else
    b = m;
  end
  if ~announced && a == olda && b == oldb
    labmate_log('onset', 1);     % first iteration that makes no progress
    announced = true;
  end
  labmate_log('width', b - a);
  printf('iter %d  mid = %.17g  width = %.6e\n', it, m, b - a);
  pause(0.05);
end
printf('stopped after %d iterations, root ~ %.17g\n', it, (a + b) / 2);
