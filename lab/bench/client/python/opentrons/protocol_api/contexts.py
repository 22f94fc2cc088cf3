"""opentrons.protocol_api.contexts on labmate's bench twin."""
from . import (ProtocolContext, InstrumentContext, TemperatureModuleContext, MagneticModuleContext,  # noqa: F401
               ThermocyclerContext, HeaterShakerContext, AbsorbanceReaderContext, Labware, Well)
