% label: faulty
% fault: stagnation
% runtime: 15
% what: damped driven pendulum with semi-implicit Euler, printing a CSV row once per simulated second and stopping when t == t_end with t accumulated as t + 0.1: the sum of a hundred 0.1 is 9.99999999999998, never exactly 10, so after the row for t = 10 the loop runs past its end, silently and busily (no save point matches any more), until a step-limit guard errors out at t = 15000 s about 8 s later.
% damped driven pendulum, semi-implicit Euler, dt = 0.1 s, state saved once per second until t_end
g = 9.81; len = 0.5; gam = 0.3; A = 1.2; Om = 2.0;
th = 0.2; om = 0.0; t = 0; dt = 0.1; t_end = 10;
tsave = 0:1:t_end; nstep = 0;
printf('time_s,theta_rad,omega_rad_s,energy_J_per_kg\n');
printf('%.1f,%.6f,%.6f,%.6f\n', t, th, om, 0.5 * len^2 * om^2 + g * len * (1 - cos(th)));
fflush(stdout);
while t != t_end
  om = om + dt * (-g / len * sin(th) - gam * om + A * cos(Om * t));
  th = th + dt * om;
  t = t + dt;
  nstep = nstep + 1;
  if t > t_end && ~exist('passed', 'var')
    labmate_log('onset', 1); passed = true;
  end
  if any(abs(t - tsave) < 1e-9)
    printf('%.1f,%.6f,%.6f,%.6f\n', t, th, om, 0.5 * len^2 * om^2 + g * len * (1 - cos(th)));
    fflush(stdout);
    pause(0.45);
  end
  if nstep > 150000
    error('pendulum: step limit reached at t = %g s', t);
  end
end
printf('done: %d steps\n', nstep);
