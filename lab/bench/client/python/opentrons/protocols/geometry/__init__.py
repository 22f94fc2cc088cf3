"""opentrons.protocols.geometry on labmate's bench twin: module_geometry's helpers that protocols
written for robot software before 7.0 import."""
