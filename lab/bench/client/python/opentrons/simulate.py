"""opentrons.simulate on labmate's bench twin. On the robot, get_protocol_api makes a separate,
simulated ProtocolContext (for Jupyter or a check beside the protocol); a protocol's run is
given its own. So the twin's stands in for it nowhere: using it is an UnsupportedError that
says so, and run(protocol) runs on the twin as ever."""
from opentrons.protocol_api import UnsupportedError, _caller_line, _refuse


class _Separate:
    """The context get_protocol_api made: not the twin's."""

    def __init__(self, version):
        self._version = version

    def __getattr__(self, name):
        if name.startswith("__"):
            _refuse("simulate.get_protocol_api()", name)
        raise UnsupportedError("line %d: .%s on simulate.get_protocol_api(%r)'s context: it is a separate simulation, "
                               "not the run's; labmate's bench twin runs run(protocol)'s protocol"
                               % (_caller_line(), name, self._version))


def get_protocol_api(version, bundled_labware=None, bundled_data=None, extra_labware=None, robot_type=None,
                     use_virtual_hardware=True):
    return _Separate(str(version))


def simulate(protocol_file, *args, **kwargs):
    raise UnsupportedError("line %d: simulate.simulate runs a protocol in a separate simulation: "
                           "run it with labmate lab simulate instead" % _caller_line())


def format_runlog(runlog):
    """The run log as text, one command a line (as Opentrons formats it)."""
    return "\n".join("\t" * max(0, e.get("level", 1) - 1) + str(e.get("payload", {}).get("text", "")) for e in runlog)
