# Serial dilution 1:2 along row A.
from opentrons import protocol_api

metadata = {"protocolName": "Serial dilution", "apiLevel": "2.11"}


def run(protocol: protocol_api.ProtocolContext):
    plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = protocol.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = protocol.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p300 = protocol.load_instrument("p300_single_gen2", "right", tip_racks=[tips])
    row = plate.rows()[0]
    p300.distribute(100, res["A1"], row[1:])
    p300.transfer(200, res["A2"], row[0])
    p300.transfer(100, row[:11], row[1:], mix_after=(3, 50), new_tip="always")
