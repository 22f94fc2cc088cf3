# Viscous reagent by hand-written steps: air gap, slow dispense, blow-out, touch tip.
metadata = {"protocolName": "Air gap", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("nest_96_wellplate_200ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.flow_rate.aspirate = 50
    p.flow_rate.dispense = 25
    for w in plate.columns()[0]:
        p.pick_up_tip()
        p.aspirate(100, res["A1"], rate=0.5)
        p.air_gap(20)
        assert p.current_volume == 120
        p.dispense(120, w.top(-2))
        p.blow_out(w.top())
        p.touch_tip(w)
        p.drop_tip()
