# Aliquot a reagent into 24 cold tubes (GEN1 pipette, temperature module).
metadata = {"protocolName": "Cold aliquots", "apiLevel": "2.8"}


def run(ctx):
    temp = ctx.load_module("temperature module gen2", 3)
    tubes = temp.load_labware("opentrons_24_aluminumblock_nest_1.5ml_snapcap", "tubes")
    stock = ctx.load_labware("opentrons_15_tuberack_falcon_15ml_conical", 2, "stock")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 1, "tips")
    p300 = ctx.load_instrument("p300_single", "right", tip_racks=[tips])
    temp.set_temperature(4)
    p300.distribute(100, stock["A1"], tubes.wells())
    temp.deactivate()
