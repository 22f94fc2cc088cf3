"""labmate's Opentrons Protocol API v2 on the bench twin: protocol_api.ProtocolContext and the
labware, wells and pipettes it loads, whose every command labmate's liquid-handler twin carries
out. A protocol written for the Opentrons API runs unmodified; a name the twin does not
model raises protocol_api.UnsupportedError naming it and the protocol line."""
__version__ = "2.15.0+labmate"

from opentrons.protocols.api_support.types import APIVersion  # noqa: E402,F401
