"""opentrons.commands on labmate's bench twin: the run-log messages the Opentrons API builds for
each command (commands.dispense(…) → {"name": "command.DISPENSE", "payload": {…}}) and their
names (types). Protocols written for robot software before 7.3 import them (it is
opentrons.legacy_commands since); the twin's own run log does not go through them."""
