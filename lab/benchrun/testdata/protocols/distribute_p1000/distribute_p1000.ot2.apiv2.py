# Media into six 15 mL tubes with one tip and no disposal volume.
metadata = {"protocolName": "Media distribution", "apiLevel": "2.13"}


def run(ctx):
    stock = ctx.load_labware("opentrons_6_tuberack_falcon_50ml_conical", 1, "stock")
    tubes = ctx.load_labware("opentrons_15_tuberack_falcon_15ml_conical", 2, "tubes")
    tips = ctx.load_labware("opentrons_96_tiprack_1000ul", 3, "tips")
    p = ctx.load_instrument("p1000_single_gen2", "left", tip_racks=[tips])
    p.pick_up_tip()
    p.distribute(500, stock["A1"], tubes.rows()[0][:5] + [tubes["B1"]], disposal_volume=0, new_tip="never")
    p.drop_tip()
