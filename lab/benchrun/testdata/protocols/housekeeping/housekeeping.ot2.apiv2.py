# What protocols do around the liquid: lights, homing, comments, pauses, speeds, delays.
metadata = {"protocolName": "Housekeeping", "apiLevel": "2.13"}


def run(ctx):
    ctx.set_rail_lights(True)
    ctx.home()
    ctx.max_speeds["Z"] = 50
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.default_speed = 200
    p.well_bottom_clearance.aspirate = 2
    if not ctx.is_simulating():
        raise RuntimeError("the twin is a simulation")
    ctx.comment("Load the reservoir")
    ctx.pause("Reservoir loaded?")
    p.transfer(100, res["A1"], plate["A1"])
    ctx.delay(seconds=90, msg="let it settle")
    ctx.set_rail_lights(False)
