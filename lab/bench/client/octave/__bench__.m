## REP = __bench__ (NAME, ARGS): send one command to the session's bench and return its
## reply (a struct: event, labware). The bench listens on two named pipes in the workspace,
## .labmate/bench.in and .labmate/bench.out (Octave has no sockets; see bench.ServeFIFO):
## each request line is "ID COMMAND-JSON", its reply a 12-byte length and the line
## "ID REPLY-JSON" (empty frames while a command takes long: Octave sees an interrupt only
## between reads); a reply an interrupted command never read is skipped by its ID. A refused command is an Octave error with the twin's message. After
## each command the volumes of the wells it touched, the tips picked up, a heater-shaker's
## temperature, a reading's absorbances and an analysis's peak areas are logged as the Python
## module logs them (vol_<labware>_<well>, tips_used, hs<slot>_temp_c, od_<labware>_<well>_<nm>,
## area_<labware>_<well>_<n>), at the protocol clock when the command ended (outside a protocol
## run, at the command's number). The connection and the tip count persist across cells.
function rep = __bench__ (name, args)
  persistent fin = -1 fout = -1 token = "" n = 0 tips = 0 here = "" side = -1 done = 0;
  if (isempty (here))
    here = fileparts (mfilename ("fullpath"));
  endif
  if (fin < 0 || isempty (fopen (fin)) || isempty (fopen (fout)))
    ws = getenv ("LABMATE_WORKSPACE");
    if (isempty (ws))
      ws = pwd ();
    endif
    in = fullfile (ws, ".labmate", "bench.in");
    out = fullfile (ws, ".labmate", "bench.out");
    [info, err] = stat (in);
    if (err != 0 || ! S_ISFIFO (info.mode) || exist (out, "file") == 0)
      error ("labmate:bench:none", "labmate: no bench at %s: run protocols with labmate lab simulate or labmate lab run", in);
    endif
    ## Opening a pipe the bench holds open does not wait.
    fout = fopen (out, "r");
    fin = fopen (in, "w");
    if (fin < 0 || fout < 0)
      error ("labmate:bench:none", "labmate: cannot open the bench's pipes %s and %s", in, out);
    endif
    token = sprintf ("%d-%d-%d", getpid (), round (time () * 1e3), randi (1e9));
  endif
  ## The protocol line: the innermost frame that is not one of these functions.
  line = 0;
  st = dbstack ();
  for i = 2:numel (st)
    if (! strncmp (st(i).file, here, numel (here)))
      line = st(i).line;
      break;
    endif
  endfor
  n++;
  id = sprintf ("%s.%d", token, n);
  if (isempty (args))
    args = struct ();
  endif
  fprintf (fin, "%s %s\n", id, jsonencode (struct ("name", name, "args", args, "line", line)));
  fflush (fin);
  want = [id " "];
  while (true)
    ## A header of 12 bytes with the length of the reply line (fgetl would wait for a byte
    ## past the line's end).
    head = fread (fout, 12, "char=>char")';
    n = str2double (head);
    if (numel (head) < 12 || ! (n >= 0))
      fclose (fin); fclose (fout); fin = -1;
      error ("labmate:bench:closed", "labmate: the bench closed its pipes (it stopped or was restarted: run the command again)");
    elseif (n == 0)
      continue;  # a heartbeat of a long command: an interrupt is seen here
    endif
    raw = fread (fout, n, "char=>char")';
    if (strncmp (raw, want, numel (want)))
      break;
    endif
  endwhile
  rep = jsondecode (raw(numel (want)+1:end), "makeValidName", false);
  if (isfield (rep, "error"))
    error ("labmate:bench:refused", "%s", rep.error.message);
  endif
  ev = rep.event;
  tele = {};  # "name value" pairs, written to the side channel at once
  if (isfield (ev, "volumes_ul"))
    refs = fieldnames (ev.volumes_ul);
    for i = 1:numel (refs)
      tele(end+1,:) = {["vol_" strrep(refs{i}, "/", "_")], ev.volumes_ul.(refs{i})};
    endfor
  endif
  if (isfield (ev, "steps"))
    picked = 0;
    for i = 1:numel (ev.steps)
      s = ev.steps(i);
      if (iscell (s))
        s = s{1};
      endif
      picked += strcmp (s.action, "pick_up_tip");
    endfor
    if (picked > 0)
      tips += picked;
      tele(end+1,:) = {"tips_used", tips};
    endif
  endif
  if (isfield (ev, "module") && strcmp (ev.module.model, "heaterShakerModuleV1"))
    t = 0;
    if (isfield (ev.module, "temperature_c"))
      t = ev.module.temperature_c;
    endif
    tele(end+1,:) = {sprintf("hs%d_temp_c", ev.module.slot), t};
  endif
  warnings = {};
  if (isfield (ev, "warnings"))
    warnings = cellstr (ev.warnings);
  endif
  if (isfield (ev, "reading"))
    r = ev.reading;
    for i = 1:numel (r.wells)
      w = r.wells(i);
      if (iscell (w))
        w = w{1};
      endif
      if (isfield (w, "path_cm") && w.path_cm != 0)
        for k = 1:numel (r.wavelengths_nm)
          tele(end+1,:) = {sprintf("od_%s_%s_%g", r.labware, w.well, r.wavelengths_nm(k)), w.od(k)};
        endfor
      endif
    endfor
    if (isfield (r, "warnings"))
      warnings = [warnings; cellstr(r.warnings)];
    endif
  endif
  if (isfield (ev, "chromatogram"))
    c = ev.chromatogram;
    for i = 1:numel (c.peaks)
      p = c.peaks(i);
      if (iscell (p))
        p = p{1};
      endif
      tele(end+1,:) = {sprintf("area_%s_%d", strrep(c.well, "/", "_"), i - 1), p.area};
    endfor
  endif
  if (! isempty (tele))
    ## As labmate_log writes them, with one flush.
    if (side < 0 || isempty (fopen (side)))  # a function call costs more than the check
      side = __labmate_fd__ ();
    endif
    ## On the protocol's clock (when the command ended), or outside a protocol run at the
    ## command's number: a protocol that mixes the same well 500 times moves on, and is not a
    ## loop that stopped converging.
    done++;
    clock = done;
    if (isfield (ev, "start_s") || isfield (ev, "seconds"))
      clock = 0;
      if (isfield (ev, "start_s"))
        clock += ev.start_s;
      endif
      if (isfield (ev, "seconds"))
        clock += ev.seconds;
      endif
    endif
    tele(:, 3) = {sprintf("%.17g", clock)};
    tele = tele(:, [1 3 2])';
    fprintf (side, "S\t%s\t%s\t%.17g \n", tele{:});
    fflush (side);
  endif
  for i = 1:numel (warnings)
    fprintf (stderr, "line %d: warning: %s\n", line, warnings{i});
  endfor
endfunction
