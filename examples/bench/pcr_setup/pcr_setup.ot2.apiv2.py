# PCR setup: master mix to 24 wells, then each sample with a new tip.
metadata = {"protocolName": "PCR setup", "apiLevel": "2.13"}


def run(ctx):
    [num_samples, mm_vol, sample_vol] = get_values("num_samples", "mm_vol", "sample_vol")  # noqa: F821
    pcr = ctx.load_labware("nest_96_wellplate_100ul_pcr_full_skirt", 1, "pcr")
    samples = ctx.load_labware("opentrons_24_tuberack_nest_1.5ml_snapcap", 2, "samples")
    mm = ctx.load_labware("opentrons_24_aluminumblock_nest_1.5ml_snapcap", 4, "mm")
    tips = ctx.load_labware("opentrons_96_filtertiprack_20ul", 3, "tips")
    p20 = ctx.load_instrument("p20_single_gen2", "left", tip_racks=[tips])
    dests = pcr.wells()[:num_samples]
    p20.distribute(mm_vol, mm["A1"], dests)
    for s, d in zip(samples.wells()[:num_samples], dests):
        p20.transfer(sample_vol, s, d, new_tip="always")
