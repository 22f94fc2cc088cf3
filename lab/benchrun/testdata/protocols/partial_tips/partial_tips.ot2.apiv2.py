"""An 8-channel pipette with partial nozzle layouts (API level 2.20): one nozzle (H1) for
single wells, four (H1 to E1) for part of a column, then all eight. Each layout's tips are
taken as the Opentrons API searches the rack: from the top of a column down, a cluster of
fresh tips under the active nozzles, the primary nozzle at its bottom."""
from opentrons import protocol_api
from opentrons.protocol_api import ALL, PARTIAL_COLUMN, SINGLE

metadata = {"protocolName": "Partial tips", "apiLevel": "2.20"}


def run(ctx: protocol_api.ProtocolContext):
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 1, "tips")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    plate = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 3, "plate")
    m20 = ctx.load_instrument("p20_multi_gen2", "left", tip_racks=[tips])

    m20.configure_nozzle_layout(style=SINGLE, start="H1", tip_racks=[tips])
    m20.transfer(10, res["A1"], [plate["A1"], plate["B1"], plate["C1"]], new_tip="always")  # tips A1, B1, C1

    m20.configure_nozzle_layout(style=PARTIAL_COLUMN, start="H1", end="E1")
    m20.pick_up_tip(tips)  # the first 4 fresh tips in a row down column 1: D1 to G1, H1 nozzle at G1
    assert m20.active_channels == 4
    m20.aspirate(10, res["A1"])
    m20.dispense(10, plate["H2"])  # H1 nozzle at H2, the others at G2, F2, E2
    m20.drop_tip()

    m20.configure_nozzle_layout(style=ALL, tip_racks=[tips])
    m20.transfer(5, res["A1"], plate["A3"])  # column 2 of tips: column 1 has used ones
