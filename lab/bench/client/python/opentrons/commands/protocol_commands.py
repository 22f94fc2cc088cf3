"""The Opentrons API's run-log messages of protocol-level commands (comment, delay, pause,
resume, move_labware)."""
from .commands import _message, comment, delay, pause, resume  # noqa: F401


def move_labware(text):
    return _message("MOVE_LABWARE", text)
