"""opentrons.protocols.types on labmate's bench twin: APIVersion, where protocols written for
robot software before 4.0 import it from."""
from opentrons.protocols.api_support.types import APIVersion  # noqa: F401
