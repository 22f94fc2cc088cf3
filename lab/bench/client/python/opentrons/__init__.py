"""labmate's Opentrons Protocol API v2 on the bench twin: protocol_api.ProtocolContext and the
labware, wells and pipettes it loads, whose every command labmate's liquid-handler twin carries
out. A protocol written for the Opentrons API runs unmodified; a name the twin does not
model raises protocol_api.UnsupportedError naming it and the protocol line."""
__version__ = "2.15.0+labmate"

from opentrons.protocols.api_support.types import APIVersion  # noqa: E402,F401


class _APIv1:
    """A name of the Opentrons API v1 (robot, labware, instruments, modules), which robot
    software before 4.0 let a v2 protocol import beside it. Importing it works, as it did;
    using it is an UnsupportedError, except robot.commands(): v1's run log, empty in a v2
    protocol."""

    def __init__(self, name):
        self._name = name

    def commands(self):
        if self._name != "robot":
            return self.__getattr__("commands")
        return []

    def __getattr__(self, attr):
        from opentrons.protocol_api import UnsupportedError, _caller_line
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise UnsupportedError("line %d: opentrons.%s.%s is the Opentrons API v1, not modelled by labmate's bench "
                               "twin: a v2 protocol uses run(protocol)'s protocol" % (_caller_line(), self._name, attr))


def __getattr__(name):
    if name in ("robot", "labware", "instruments", "modules"):
        return _APIv1(name)
    raise AttributeError("module 'opentrons' has no attribute %r" % name)
