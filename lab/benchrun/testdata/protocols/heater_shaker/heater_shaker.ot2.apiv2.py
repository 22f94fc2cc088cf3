# Cells on the heater-shaker: add medium, shake warm, stop.
metadata = {"protocolName": "Heater-shaker", "apiLevel": "2.13"}


def run(ctx):
    hs = ctx.load_module("heaterShakerModuleV1", 1)
    plate = hs.load_labware("corning_96_wellplate_360ul_flat", "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    hs.close_labware_latch()
    p.distribute(150, res["A1"], plate.columns()[0])
    hs.set_and_wait_for_temperature(37)
    hs.set_and_wait_for_shake_speed(500)
    ctx.delay(minutes=10)
    hs.deactivate_shaker()
    hs.deactivate_heater()
    hs.open_labware_latch()
