# Cherrypicking from a CSV, starting at tip B1.
metadata = {"protocolName": "Cherrypicking", "apiLevel": "2.10"}


def run(ctx):
    [csv, start] = get_values("csv", "start_tip")  # noqa: F821
    src = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "src")
    dst = ctx.load_labware("corning_96_wellplate_360ul_flat", 2, "dst")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.starting_tip = tips[start]
    for line in csv.strip().splitlines()[1:]:
        s, d, v = line.split(",")
        p.pick_up_tip()
        p.aspirate(float(v), src[s])
        p.dispense(float(v), dst[d])
        p.drop_tip()
