# Normalisation from a CSV: water then sample into each destination well.
metadata = {"protocolName": "Normalization", "apiLevel": "2.9"}


def run(ctx):
    [csv] = get_values("csv")  # noqa: F821
    rows = [line.split(",") for line in csv.strip().splitlines()[1:]]
    src = ctx.load_labware("biorad_96_wellplate_200ul_pcr", 1, "src")
    dst = ctx.load_labware("biorad_96_wellplate_200ul_pcr", 2, "dst")
    res = ctx.load_labware("nest_12_reservoir_15ml", 3, "res")
    t20 = ctx.load_labware("opentrons_96_tiprack_20ul", 4, "t20")
    t300 = ctx.load_labware("opentrons_96_tiprack_300ul", 5, "t300")
    p20 = ctx.load_instrument("p20_single_gen2", "left", tip_racks=[t20])
    p300 = ctx.load_instrument("p300_single_gen2", "right", tip_racks=[t300])
    p300.transfer([float(r[2]) for r in rows], res["A1"], [dst[r[0]] for r in rows])
    for well, vol, _ in rows:
        p20.transfer(float(vol), src[well], dst[well], new_tip="always")
