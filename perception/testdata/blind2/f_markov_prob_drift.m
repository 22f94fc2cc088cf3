% label: faulty
% fault: drift
% runtime: 13
% what: four-state sodium-channel Markov model (C1, C2, O, I) under a voltage-clamp step from -90 to -10 mV, master equation integrated with RK4, occupancies printed in percent: the O -> I rate was added to the generator off the diagonal but not subtracted on it, so Q's columns do not sum to zero and probability is created: once the channels open, the printed sum [%] climbs from 100.000 to 100.19, 107.6, 127.5, 170, 216 % in 30 ms, and P(O) itself exceeds 98%.
% four-state sodium-channel model C1 <-> C2 <-> O -> I -> C1: occupancy probabilities during a
% voltage-clamp protocol (holding at -90 mV, step to -10 mV at t = 4 ms), from the master equation
% dp/dt = Q(V) p integrated with RK4 (dt = 0.01 ms)
k21 = 0.5; k2o = 1.5; ko2 = 0.3; koi = 0.05; ki1 = 0.02;   % 1/ms
p = [1; 0; 0; 0];
dt = 0.01;
printf('   t [ms]   V [mV]     C1 [%%]     C2 [%%]      O [%%]      I [%%]    sum [%%]\n');
logged = false;
for s = 1:3400
  t = s * dt;
  if t <= 4, V = -90; k12 = 0; else, V = -10; k12 = 2.0; end
  Q = zeros(4);
  Q(2,1) = k12;  Q(1,1) = -k12;
  Q(1,2) = k21;  Q(3,2) = k2o;  Q(2,2) = -(k21 + k2o);
  Q(2,3) = ko2;  Q(4,3) = koi;  Q(3,3) = -ko2;          % the O -> I exit is missing from Q(3,3)
  Q(1,4) = ki1;  Q(4,4) = -ki1;
  k1 = Q * p; k2 = Q * (p + dt/2 * k1); k3 = Q * (p + dt/2 * k2); k4 = Q * (p + dt * k3);
  p = p + dt/6 * (k1 + 2*k2 + 2*k3 + k4);
  if ~logged && abs(sum(p) - 1) >= 5e-6
    labmate_log('onset', 1); logged = true;   % the sum shows in the printed 3rd decimal
  end
  if mod(s, 25) == 0
    printf('%9.2f %8.1f %10.3f %10.3f %10.3f %10.3f %10.3f\n', t, V, 100 * p, 100 * sum(p));
    fflush(stdout);
    pause(0.08);
  end
end
