# Magnetic bead clean-up of 4 samples: beads, bind, remove supernatant, ethanol wash, elute.
from opentrons import types

metadata = {"protocolName": "Bead clean-up", "apiLevel": "2.11"}


def run(ctx):
    mag = ctx.load_module("magnetic module gen2", 4)
    plate = mag.load_labware("nest_96_wellplate_2ml_deep", "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    out = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 1, "out")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    samples = plate.wells()[:4]
    for s in samples:
        p.transfer(90, res["A1"], s, mix_after=(5, 80))
    ctx.delay(minutes=5)
    mag.engage(height_from_base=5)
    ctx.delay(minutes=3)
    for s in samples:
        p.transfer(190, s.bottom().move(types.Point(x=-1, z=1)), ctx.fixed_trash["A1"])
    for s in samples:
        p.transfer(200, res["A2"], s.top())
        p.transfer(200, s, ctx.fixed_trash["A1"])
    mag.disengage()
    for s in samples:
        p.transfer(30, res["A3"], s, mix_after=(3, 20))
    mag.engage(height_from_base=5)
    for s, d in zip(samples, out.wells()):
        p.transfer(25, s, d)
    mag.disengage()
