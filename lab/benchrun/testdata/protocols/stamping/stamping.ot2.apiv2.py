# Plate stamping: every column of a source plate into a destination plate.
metadata = {"protocolName": "Stamping", "apiLevel": "2.7"}


def run(ctx):
    src = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "src")
    dst = ctx.load_labware("corning_96_wellplate_360ul_flat", 2, "dst")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    m = ctx.load_instrument("p300_multi_gen2", "right", tip_racks=[tips])
    for s, d in zip(src.rows()[0], dst.rows()[0]):
        m.transfer(50, s, d, new_tip="always")
