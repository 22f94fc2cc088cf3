# Well geometry, Point offsets, Location.move, move_to and the Mount enum.
from opentrons import protocol_api, types
from opentrons.types import Point, Location

metadata = {"protocolName": "Geometry", "apiLevel": "2.13"}


def run(ctx: protocol_api.ProtocolContext):
    plate = ctx.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", types.Mount.LEFT, tip_racks=[tips])
    a1 = plate["A1"]
    assert a1.diameter == 6.86 and a1.depth == 10.67 and a1.max_volume == 360
    assert res["A1"].length == 8.2 and res["A1"].diameter is None
    top, bottom = a1.top(), a1.bottom(2)
    assert abs(top.point.z - bottom.point.z - 8.67) < 1e-9
    assert isinstance(a1.center(), Location) and a1.center().labware.object is a1
    side = a1.bottom(1).move(Point(x=a1.diameter / 2 - 1))
    p.pick_up_tip()
    for w in plate.rows_by_name()["A"][:4]:
        p.aspirate(50, res.wells_by_name()["A1"].bottom(2))
        p.move_to(w.top(5))
        p.dispense(50, w.bottom(1).move(Point(x=1, y=-1)))
    p.aspirate(20, side)
    p.dispense(20, plate.columns_by_name()["2"][0])
    p.drop_tip()
