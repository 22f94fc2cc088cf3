"""opentrons.protocols on labmate's bench twin: api_support.types.APIVersion."""
