"""opentrons.protocol_api.labware on labmate's bench twin."""
from . import Labware, Well, OutOfTipsError, UnsupportedError  # noqa: F401
