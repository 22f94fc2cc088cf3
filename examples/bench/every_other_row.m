## Colour every other row of a 96-well plate with a dye: rows A, C, E and G get 100 µL of
## brilliant blue, rows B, D, F and H stay empty. The Octave twin of every_other_row.py: a
## script of labmate's Octave bench functions, run by `labmate lab simulate` (a fresh bench)
## or `labmate lab run` (the workspace's); errors name this file's lines.
plate = load_labware ("corning_96_wellplate_360ul_flat", 1, "plate");
reservoir = load_labware ("nest_12_reservoir_15ml", 2, "reservoir");
tips = load_labware ("opentrons_96_tiprack_300ul", 3);
p300 = load_instrument ("p300_single_gen2", "left", tips);
blue = define_liquid ("blue", "", "#0000ff", {"brilliant blue FCF", 0.0001});
load_liquid (reservoir.wells.A1, 12000, blue);
for r = 1:2:numel (plate.rows)  # rows A, C, E, G
  transfer (p300, 100, reservoir.wells.A1, plate.rows{r}, "once");
endfor
