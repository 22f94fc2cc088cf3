## __labmate_load__ (FILE): load the variables __labmate_save__ wrote to FILE into the base
## workspace. A file load cannot read changes nothing. Prints a labmate-snapshot report line
## per variable.
function __labmate_load__ (file)
  vars = load (file);
  names = fieldnames (vars);
  for i = 1:numel (names)
    assignin ("base", names{i}, vars.(names{i}));
    printf ("labmate-snapshot\trestored\t%s\n", names{i});
  endfor
endfunction
