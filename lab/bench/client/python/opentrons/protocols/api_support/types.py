"""APIVersion as the Opentrons API has it: a (major, minor) pair that compares."""
from collections import namedtuple


class APIVersion(namedtuple("APIVersion", "major minor")):
    @classmethod
    def from_string(cls, s):
        major, minor = str(s).split(".")
        return cls(int(major), int(minor))

    def __str__(self):
        return "%d.%d" % self
