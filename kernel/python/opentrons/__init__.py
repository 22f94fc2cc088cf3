"""labmate's Opentrons Protocol API v2 on the bench twin: protocol_api.ProtocolContext and the
labware, wells and pipettes it loads, whose every command labmate's liquid-handler twin carries
out. A protocol written for the Opentrons API runs unmodified within the supported subset; a
name outside it raises protocol_api.UnsupportedError naming it."""
__version__ = "2.20.0+labmate"
