% label: healthy
% fault: none
% expect-silence: 30
% runtime: 9
% what: vibrational density of states of a 1100-atom random network (dense symmetric dynamical matrix, full eig in Octave): one line, then several seconds of legitimate, declared silence while LAPACK works, then the highest and the median frequency, the number of zero modes (one per disconnected part of the network) and a check of a shifted spectrum.
rand('seed', 5);
n = 1100;
B = rand(n) < 0.004;
B = triu(B, 1); B = B + B';
kspring = B .* (0.5 + rand(n)); kspring = triu(kspring, 1); kspring = kspring + kspring';
D = diag(sum(kspring, 2)) - kspring;
printf('dynamical matrix of a %d-atom random network, %d bonds: diagonalising (quiet for a few seconds)...\n', n, nnz(B) / 2);
fflush(stdout);
w2 = eig(D);
w2b = eig(D + 0.1 * eye(n));
w = sqrt(max(w2, 0));
printf('highest frequency = %.4f\n', max(w));
printf('zero modes (w^2 < 1e-9) = %d\n', sum(w2 < 1e-9));
printf('median frequency = %.4f\n', median(w));
printf('shift check = %.6f\n', mean(w2b - w2));
