"""Idioms of labs' own protocols that the Opentrons API accepts: apiLevel in metadata beside a
requirements dict without one, run-log imports of robot software before 7.3, a
simulate.get_protocol_api context made beside the run's, runtime parameters (fields.json gives
num_samples 3 over the default 2), an adapter on a module, a liquid without a name, 0 µL
loaded, a Flex slot name (D2), the hardware pipette's config and the Labware Creator test
protocol's _from_center_cartesian."""
from opentrons import protocol_api, simulate
from opentrons.commands.commands import dispense, drop_tip  # noqa: F401
from opentrons.commands.types import MoveToCommand  # noqa: F401
from opentrons.protocols.types import APIVersion
from opentrons.protocols.geometry.module_geometry import models_compatible  # noqa: F401
from opentrons.types import Location

metadata = {"protocolName": "Lab idioms", "apiLevel": "2.18"}
requirements = {"robotType": "OT-2"}

checker = simulate.get_protocol_api("2.18")  # a separate simulation on the robot, unused


def add_parameters(parameters):
    parameters.add_int("Samples", "num_samples", default=2, minimum=1, maximum=8)
    parameters.add_float("Volume (µL)", "vol", default=50.0, minimum=10, maximum=200)
    parameters.add_bool("Mix", "mix", default=False)
    parameters.add_str("Buffer", "buffer", default="TE",
                       choices=[{"display_name": "TE", "value": "TE"}, {"display_name": "Water", "value": "water"}])


def run(ctx: protocol_api.ProtocolContext):
    assert ctx.api_version >= APIVersion(2, 18)
    assert ctx.params.buffer == "TE" and ctx.params.mix is False
    hs = ctx.load_module("heaterShakerModuleV1", 1)
    adapter = hs.load_adapter("opentrons_96_flat_bottom_adapter")
    plate = adapter.load_labware("corning_96_wellplate_360ul_flat", "plate")
    res = ctx.load_labware("nest_12_reservoir_15ml", "D2", "res")  # the Flex name of slot 2 (2.15)
    tips = ctx.load_labware("opentrons_96_tiprack_300ul", 3, "tips")
    p = ctx.load_instrument("p300_single_gen2", "left", tip_racks=[tips])
    hw = ctx._hw_manager.hardware._attached_instruments[p._implementation.get_mount()]
    assert hw.config.pick_up_current == 0.125  # the GEN2 P300's default, as labs read it before changing it
    buffer = ctx.define_liquid("", "unnamed, as the App lets one", "#0000ff")
    res["A1"].load_liquid(buffer, 10000)
    res["A2"].load_liquid(buffer, 0)
    p.pick_up_tip()
    for w in plate.wells()[:ctx.params.num_samples]:
        p.aspirate(ctx.params.vol, res["A1"])
        p.dispense(ctx.params.vol, w)
        p.move_to(Location(w._from_center_cartesian(x=1, y=0, z=1), w))
    p.drop_tip()
