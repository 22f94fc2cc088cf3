# Colour every other row of a 96-well plate with a dye: rows A, C, E and G get 100 µL of
# brilliant blue, rows B, D, F and H stay empty. An Opentrons Protocol API v2 file, run on the
# bench twin by `labmate lab simulate` (a fresh bench) or `labmate lab run` (the workspace's).
from opentrons import protocol_api

metadata = {"apiLevel": "2.13", "protocolName": "Colour every other row"}


def run(protocol: protocol_api.ProtocolContext):
    plate = protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    reservoir = protocol.load_labware("nest_12_reservoir_15ml", 2, "reservoir")
    tips = protocol.load_labware("opentrons_96_tiprack_300ul", 3)
    p300 = protocol.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    blue = protocol.define_liquid("blue", concentrations={"brilliant blue FCF": 0.0001})
    reservoir["A1"].load_liquid(blue, 12000)
    for row in plate.rows()[::2]:
        p300.transfer(100, reservoir["A1"], row, new_tip="once")
