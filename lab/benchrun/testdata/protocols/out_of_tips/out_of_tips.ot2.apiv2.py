# 100 single transfers from one tip rack: out of tips after 96, the rack is replaced.
from opentrons.protocol_api.labware import OutOfTipsError

metadata = {"protocolName": "Tip replacement", "apiLevel": "2.13"}


def run(ctx):
    plate = ctx.load_labware("corning_384_wellplate_112ul_flat", 1, "plate")
    tubes = ctx.load_labware("opentrons_6_tuberack_falcon_50ml_conical", 2, "tubes")
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 3, "tips")
    p20 = ctx.load_instrument("p20_single_gen2", "left", tip_racks=[tips])

    def pick_up():
        try:
            p20.pick_up_tip()
        except OutOfTipsError:
            ctx.pause("Replace the 20 µL tips")
            p20.reset_tipracks()
            p20.pick_up_tip()

    for w in plate.wells()[:100]:
        pick_up()
        p20.aspirate(5, tubes["A1"])
        p20.dispense(5, w)
        p20.drop_tip()
