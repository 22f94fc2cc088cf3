# A volume gradient from 20 to 200 µL across ten wells.
metadata = {"protocolName": "Gradient", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_1_reservoir_195ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.transfer((20, 200), res["A1"], plate.wells()[:10])
