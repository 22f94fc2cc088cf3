# PCR on the thermocycler: master mix and samples by column, then a 30-cycle profile.
metadata = {"protocolName": "Thermocycler PCR", "apiLevel": "2.13"}


def run(ctx):
    tc = ctx.load_module("thermocycler")
    pcr = tc.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", "pcr")
    samples = ctx.load_labware("biorad_96_wellplate_200ul_pcr", 1, "samples")
    res = ctx.load_labware("nest_12_reservoir_15ml", 2, "res")
    tips = ctx.load_labware("opentrons_96_filtertiprack_20ul", 3, "tips")
    m20 = ctx.load_instrument("p20_multi_gen2", "left", tip_racks=[tips])
    tc.open_lid()
    m20.transfer(10, res["A1"], pcr.rows()[0][:2])
    m20.transfer(10, samples.rows()[0][:2], pcr.rows()[0][:2], mix_after=(2, 10), new_tip="always")
    tc.close_lid()
    tc.set_lid_temperature(105)
    tc.set_block_temperature(95, hold_time_seconds=180)
    tc.execute_profile(steps=[{"temperature": 95, "hold_time_seconds": 15}, {"temperature": 60, "hold_time_seconds": 30},
                              {"temperature": 72, "hold_time_seconds": 30}], repetitions=30, block_max_volume=20)
    tc.set_block_temperature(72, hold_time_minutes=5)
    tc.set_block_temperature(4)
    tc.deactivate_lid()
    tc.open_lid()
