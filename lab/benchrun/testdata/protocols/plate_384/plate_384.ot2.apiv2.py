# An 8-channel pipette into a 384-well plate: row A reaches A, C, E…O; row B reaches B, D…P.
metadata = {"protocolName": "384 fill", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("corning_384_wellplate_112ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 3, "tips")
    m = ctx.load_instrument("p20_multi_gen2", "left", tip_racks=[tips])
    m.transfer(10, res["A1"], [plate["A1"], plate["B1"]])
