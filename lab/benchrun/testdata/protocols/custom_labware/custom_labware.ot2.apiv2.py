# Custom labware: one from the labware/ folder beside the protocol, one defined in the protocol.
import json

metadata = {"protocolName": "Custom labware", "apiLevel": "2.13"}

VIALS = json.loads('{"ordering": [["A1", "B1"], ["A2", "B2"], ["A3", "B3"]], "brand": {"brand": "labmate"}, "metadata": {"displayName": "inline vials", "displayCategory": "tubeRack", "displayVolumeUnits": "mL"}, "dimensions": {"xDimension": 127.76, "yDimension": 85.48, "zDimension": 60}, "wells": {"A1": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 20, "y": 60, "z": 5}, "B1": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 20, "y": 30, "z": 5}, "A2": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 60, "y": 60, "z": 5}, "B2": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 60, "y": 30, "z": 5}, "A3": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 100, "y": 60, "z": 5}, "B3": {"depth": 50, "totalLiquidVolume": 5000, "shape": "circular", "diameter": 12, "x": 100, "y": 30, "z": 5}}, "parameters": {"format": "irregular", "isTiprack": false, "loadName": "labmate_6_vials_inline", "isMagneticModuleCompatible": false}, "namespace": "custom_beta", "version": 1, "schemaVersion": 2, "cornerOffsetFromSlot": {"x": 0, "y": 0, "z": 0}}')


def run(ctx):
    rack = ctx.load_labware("labmate_6_tuberack_5ml", 1, "rack")
    vials = ctx.load_labware_from_definition(VIALS, 2, "vials")
    res = ctx.load_labware("nest_1_reservoir_195ml", 4, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_1000ul", 3, "tips")
    p = ctx.load_instrument("p1000_single_gen2", "left", tip_racks=[tips])
    assert rack["B3"].max_volume == 5000 and rack["A1"].diameter == 12
    p.transfer(1000, res["A1"], rack.wells())
    p.transfer(2500, res["A1"], vials.wells()[:2])
