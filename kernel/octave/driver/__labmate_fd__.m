## FID = __labmate_fd__ (): the telemetry side channel (fd 3), reopened if a cell closed it.
function fid = __labmate_fd__ ()
  persistent f = -1;
  if (f < 0 || isempty (fopen (f)))
    f = fopen ("/dev/fd/3", "w");
  endif
  fid = f;
endfunction
