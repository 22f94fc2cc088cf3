"""The Opentrons API's command names (types.DISPENSE == "command.DISPENSE") and the message
types a protocol may name in annotations (types.MoveToCommand): each is a dict."""

_NAMES = ("HOME AIR_GAP ASPIRATE BLOW_OUT CONSOLIDATE DELAY DISPENSE DISTRIBUTE DROP_TIP MIX "
          "MOVE_TO PICK_UP_TIP PAUSE RESUME RETURN_TIP TOUCH_TIP TRANSFER COMMENT MAGDECK_ENGAGE "
          "MAGDECK_DISENGAGE TEMPDECK_SET_TEMP TEMPDECK_AWAIT_TEMP TEMPDECK_DEACTIVATE "
          "THERMOCYCLER_OPEN THERMOCYCLER_CLOSE THERMOCYCLER_SET_BLOCK_TEMP THERMOCYCLER_SET_LID_TEMP "
          "THERMOCYCLER_EXECUTE_PROFILE THERMOCYCLER_DEACTIVATE THERMOCYCLER_DEACTIVATE_LID "
          "THERMOCYCLER_DEACTIVATE_BLOCK MOVE_LABWARE").split()

for _n in _NAMES:
    globals()[_n] = "command." + _n


def __getattr__(name):
    # MoveToCommand, AspirateDispenseCommandPayload…: TypedDicts in the Opentrons API.
    if name[:1].isupper() and (name.endswith("Command") or name.endswith("Payload")):
        return dict
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
