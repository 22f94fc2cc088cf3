"""opentrons.types on labmate's bench twin: Point, Location and Mount as the Opentrons API has them."""
import enum
from collections import namedtuple


class Point(namedtuple("Point", "x y z")):
    """A position or an offset in deck coordinates (mm)."""

    def __new__(cls, x=0.0, y=0.0, z=0.0):
        return super().__new__(cls, float(x), float(y), float(z))

    def __add__(self, other):
        if not isinstance(other, Point):
            return NotImplemented
        return Point(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other):
        if not isinstance(other, Point):
            return NotImplemented
        return Point(self.x - other.x, self.y - other.y, self.z - other.z)

    def __mul__(self, k):
        if not isinstance(k, (int, float)):
            return NotImplemented
        return Point(self.x * k, self.y * k, self.z * k)

    __rmul__ = __mul__

    def __abs__(self):
        return Point(abs(self.x), abs(self.y), abs(self.z))

    def magnitude_to(self, other):
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2 + (self.z - other.z) ** 2) ** 0.5


class LocationLabware:
    """What a Location is in or at (Location.labware): a well, labware, a module or a slot."""

    def __init__(self, obj):
        self.object = obj

    @property
    def is_well(self):
        return type(self.object).__name__ == "Well"

    @property
    def is_labware(self):
        return type(self.object).__name__ in ("Labware", "_Trash")

    @property
    def is_slot(self):
        return isinstance(self.object, str)

    @property
    def is_empty(self):
        return self.object is None

    @property
    def is_module(self):
        return hasattr(self.object, "_slot") and not self.is_well and not self.is_labware

    def as_well(self):
        return self.object if self.is_well else None

    def as_labware(self):
        if self.is_labware:
            return self.object
        return self.object.parent if self.is_well else None

    def get_parent_labware_and_well(self):
        if self.is_well:
            return self.object.parent, self.object
        return self.as_labware(), None

    @property
    def parent(self):
        return LocationLabware(getattr(self.object, "parent", None))

    def __eq__(self, other):
        return isinstance(other, LocationLabware) and self.object is other.object

    def __repr__(self):
        return repr(self.object)


class Location:
    """A point in deck coordinates and what it is in (a well, labware, a slot)."""

    def __init__(self, point, labware):
        self._point = point if isinstance(point, Point) else Point(*point)
        self._labware = labware if isinstance(labware, LocationLabware) else LocationLabware(labware)

    @property
    def point(self):
        return self._point

    @property
    def labware(self):
        return self._labware

    def move(self, point):
        """The same place offset by point."""
        return Location(self._point + point, self._labware)

    def __iter__(self):
        return iter((self._point, self._labware))

    def __eq__(self, other):
        return isinstance(other, Location) and self._point == other._point and self._labware == other._labware

    def __repr__(self):
        return "Location(point=%r, labware=%r)" % (self._point, self._labware)


class Mount(enum.Enum):
    LEFT = "left"
    RIGHT = "right"
    EXTENSION = "extension"

    def __str__(self):
        return self.value

    @classmethod
    def string_to_mount(cls, mount):
        return cls(str(mount).lower())


class MountType(Mount.__class__):
    pass


DeckLocation = object
