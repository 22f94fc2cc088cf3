## LW = __bench_labware__ (REPLY, SLOT): the struct load_labware returns, from the bench's
## description of loaded labware.
function lw = __bench_labware__ (r, slot)
  lw.name = r.name;
  lw.load_name = r.load_name;
  lw.display_name = r.display_name;
  lw.slot = slot;
  lw.is_tiprack = r.is_tiprack;
  ord = cellfun (@(col) strcat ([r.name "/"], cellstr (col(:))'), r.ordering(:)', "UniformOutput", false);
  lw.ordering = ord;
  lw.columns = ord;
  depth = max (cellfun (@numel, ord));
  rows = cell (1, depth);
  for i = 1:depth
    rows{i} = cellfun (@(col) col{i}, ord(cellfun (@numel, ord) >= i), "UniformOutput", false);
  endfor
  lw.rows = rows;
  w = struct ();
  for c = 1:numel (ord)
    for i = 1:numel (ord{c})
      ref = ord{c}{i};
      w.(ref(numel (r.name)+2:end)) = ref;
    endfor
  endfor
  lw.wells = w;
endfunction
