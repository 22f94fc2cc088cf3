"""The Opentrons API's run-log message builders: each returns {"name": "command.X",
"payload": {…, "text": "…"}}, as the robot's run log shows a command."""
from . import types as command_types


def _message(kind, text, **payload):
    payload["text"] = text
    return {"name": getattr(command_types, kind), "payload": payload}


def _where(location):
    return str(getattr(location, "labware", location))


def home(mount):
    return _message("HOME", "Homing pipette plunger on mount %s" % mount, axis=mount)


def aspirate(instrument, volume, location, flow_rate=None, rate=1.0):
    return _message("ASPIRATE", "Aspirating %s uL from %s at %s uL/sec" % (float(volume), _where(location), flow_rate),
                    instrument=instrument, volume=volume, location=location, rate=rate)


def dispense(instrument, volume, location, flow_rate=None, rate=1.0):
    return _message("DISPENSE", "Dispensing %s uL into %s at %s uL/sec" % (float(volume), _where(location), flow_rate),
                    instrument=instrument, volume=volume, location=location, rate=rate)


def _advanced(kind, verb, instrument, volume, source, dest):
    return _message(kind, "%s %s from %s to %s" % (verb, volume, _where(source), _where(dest)),
                    instrument=instrument, volume=volume, source=source, dest=dest)


def consolidate(instrument, volume, source, dest):
    return _advanced("CONSOLIDATE", "Consolidating", instrument, volume, source, dest)


def distribute(instrument, volume, source, dest):
    return _advanced("DISTRIBUTE", "Distributing", instrument, volume, source, dest)


def transfer(instrument, volume, source, dest):
    return _advanced("TRANSFER", "Transferring", instrument, volume, source, dest)


def mix(instrument, repetitions, volume, location):
    return _message("MIX", "Mixing %s times with a volume of %s ul" % (repetitions, float(volume)),
                    instrument=instrument, location=location, volume=volume, repetitions=repetitions)


def blow_out(instrument, location):
    return _message("BLOW_OUT", "Blowing out" + (" at %s" % _where(location) if location is not None else ""),
                    instrument=instrument, location=location)


def touch_tip(instrument):
    return _message("TOUCH_TIP", "Touching tip", instrument=instrument)


def air_gap():
    return _message("AIR_GAP", "Air gap")


def return_tip():
    return _message("RETURN_TIP", "Returning tip")


def pick_up_tip(instrument, location):
    return _message("PICK_UP_TIP", "Picking up tip from %s" % _where(location), instrument=instrument, location=location)


def drop_tip(instrument, location):
    return _message("DROP_TIP", "Dropping tip into %s" % _where(location), instrument=instrument, location=location)


def move_to(instrument, location):
    return _message("MOVE_TO", "Moving to %s" % _where(location), instrument=instrument, location=location)


def comment(msg):
    return _message("COMMENT", msg)


def delay(seconds, minutes=0, msg=None):
    text = "Delaying for %s minutes and %s seconds" % (minutes, seconds)
    return _message("DELAY", text + (". %s" % msg if msg else ""), minutes=minutes, seconds=seconds)


def pause(msg=None):
    return _message("PAUSE", "Pausing robot operation" + (": %s" % msg if msg else ""), userMessage=msg)


def resume():
    return _message("RESUME", "Resuming robot operation")
