# Pool 12 wells into one tube.
metadata = {"protocolName": "Pooling", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("opentrons_96_wellplate_200ul_pcr_full_skirt", 1, "plate")
    tubes = ctx.load_labware("opentrons_24_tuberack_eppendorf_1.5ml_safelock_snapcap", 2, "tubes")
    tips = ctx.load_labware("opentrons_96_filtertiprack_200ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    p.consolidate(15, plate.wells()[:12], tubes["A1"])
