# Below API 2.2 a tip dropped back into its rack went back to tip tracking: the next
# pick_up_tip() takes it again, so three transfers use one tip (at 2.2 and later, three).
metadata = {"protocolName": "Tip reuse, API 2.1", "apiLevel": "2.1"}


def run(ctx):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    for dest in ["A1", "A2", "A3"]:
        p.pick_up_tip()
        p.transfer(100, res["A1"], plate[dest], new_tip="never")
        p.return_tip()
    assert tips["A1"].has_tip and tips["B1"].has_tip
