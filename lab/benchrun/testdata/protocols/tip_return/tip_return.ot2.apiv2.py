# Tips reused: return_tip, drop_tip into a rack well, picking a named tip. From API 2.2 on a tip
# put back stays used for tip tracking (Well.has_tip False) but can be picked up by name.
metadata = {"protocolName": "Tip reuse", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.pick_up_tip()
    p.transfer(100, res["A1"], plate["A1"], new_tip="never")
    p.return_tip()
    p.pick_up_tip(tips["A1"])
    p.transfer(100, res["A1"], plate["A2"], new_tip="never")
    p.drop_tip(tips["A1"])
    assert p.has_tip is False and not tips["A1"].has_tip and tips["B1"].has_tip
    p.pick_up_tip(tips["A1"])
    p.transfer(100, res["A1"], plate["A3"], new_tip="never")
    p.drop_tip()
