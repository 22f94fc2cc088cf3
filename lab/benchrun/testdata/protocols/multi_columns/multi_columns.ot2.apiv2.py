"""Pooling whole columns with an 8-channel pipette, as labs write it: a column's list of wells
as the source. The Opentrons API plans a multi-channel transfer from the wells in row A only
(the other channels reach the rest of each column), so each call is one transfer of 8 tips."""
from opentrons import protocol_api

metadata = {"protocolName": "Column pooling", "apiLevel": "2.13"}


def run(ctx: protocol_api.ProtocolContext):
    tips = ctx.load_labware("opentrons_96_tiprack_20ul", 1, "tips")
    src = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 2, "src")
    dst = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 3, "dst")
    m20 = ctx.load_instrument("p20_multi_gen2", "left", tip_racks=[tips])
    for col in src.columns()[:3]:
        m20.transfer(10, col, dst["A1"], new_tip="always")
