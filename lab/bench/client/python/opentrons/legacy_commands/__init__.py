"""opentrons.legacy_commands, as robot software from 7.3 names opentrons.commands."""
import sys

from opentrons.commands import commands, protocol_commands, types  # noqa: F401

sys.modules[__name__ + ".commands"] = commands
sys.modules[__name__ + ".types"] = types
sys.modules[__name__ + ".protocol_commands"] = protocol_commands
