# ELISA: coat, wash twice, substrate, stop, with an 8-channel pipette.
metadata = {"protocolName": "ELISA", "apiLevel": "2.12"}


def run(ctx):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    m300 = ctx.load_instrument("p300_multi_gen2", "left", tip_racks=[tips])
    cols = plate.rows()[0][:6]
    trash = ctx.fixed_trash["A1"]
    m300.transfer(100, res["A1"], cols)
    ctx.delay(minutes=60)
    m300.transfer(100, cols, trash)
    for _ in range(2):
        m300.transfer(150, res["A2"], cols)
        m300.transfer(150, cols, trash)
    m300.transfer(100, res["A3"], cols)
    ctx.delay(minutes=15)
    m300.transfer(50, res["A4"], cols)
