# GEN1 pipettes: a P10 8-channel and a P50 single-channel, with mixes.
metadata = {"protocolName": "GEN1 mix", "apiLevel": "2.5"}


def run(ctx):
    plate = ctx.load_labware("biorad_96_wellplate_200ul_pcr", 1, "plate")
    res = ctx.load_labware("usascientific_12_reservoir_22ml", 2, "res")
    t10 = ctx.load_labware("opentrons_96_tiprack_10ul", 3, "t10")
    t300 = ctx.load_labware("opentrons_96_tiprack_300ul", 4, "t300")
    m10 = ctx.load_instrument("p10_multi", "left", tip_racks=[t10])
    p50 = ctx.load_instrument("p50_single", "right", tip_racks=[t300])
    assert m10.channels == 8 and p50.min_volume == 5 and p50.flow_rate.aspirate == 25
    for col in plate.rows()[0][:3]:
        m10.pick_up_tip()
        m10.aspirate(10, res["A1"])
        m10.dispense(10, col)
        m10.mix(3, 5, col)
        m10.blow_out(col.top())
        m10.drop_tip()
    p50.transfer(40, res["A2"], plate["A4"], mix_before=(2, 30), mix_after=(2, 30))
