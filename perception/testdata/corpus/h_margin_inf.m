% label: healthy
% fault: none
% requires: /usr/share/octave/packages/control-*
% runtime: 3
% what: stability margins of a PID design sweep with Octave's control package: the loop gain of a PI(D) controller on the plant 1/(s+1)^2 never reaches -180 deg of phase, so margin returns an infinite gain margin (Gm = Inf) and no phase-crossover frequency (Wcg = NaN) for every design, the normal answer; a third-order plant then has finite margins, and the chosen design's gain_margin = Inf is printed at the end.
pkg load control
s = tf('s');
G = 1 / (s + 1)^2;
for Kp = [0.5 1 2 4]
  C = Kp * (1 + 0.5 / s);
  [Gm, Pm, Wcg, Wcp] = margin(C * G)
  pause(0.4);
end
G3 = 10 / (s + 1)^3;
[Gm3, Pm3] = margin(G3)
pause(0.4);
Kp = 1;
[gain_margin, phase_margin] = margin(Kp * (1 + 0.5 / s) * G);
printf('chosen design Kp = %g: gain_margin = %g, phase_margin = %.1f deg\n', Kp, gain_margin, phase_margin);
