"""The Opentrons Protocol API v2 (OT-2, API levels 2.0–2.15) on labmate's bench twin.

A protocol written for the Opentrons API runs unmodified: ProtocolContext, InstrumentContext
(GEN1 and GEN2, single- and 8-channel), Labware and Well with their geometry from the labware
definition, opentrons.types (Point, Location, Mount) and the modules (temperature, magnetic,
thermocycler, heater-shaker, absorbance reader). Every command with liquid, tips or a module
is carried out by labmate's liquid-handler twin (lab/bench), which tracks volumes, contents,
tips and the protocol clock; motions without liquid (move_to, touch_tip, home, …) are logged
and timed. A name of the API the twin does not model raises UnsupportedError naming it and the
protocol line; a command the twin refuses raises CommandError (OutOfTipsError when no tip is
left) with the twin's message.

Liquid a protocol never declared (define_liquid and load_liquid) in a well it aspirates from is
a user-loaded unknown: the twin assumes it was put there by hand, tracks it and warns.

labmate's extension, not Opentrons: protocol.analyze(well) injects a sample into the bench's
analysis twin (an HPLC with a calibrated method) and returns an Analysis.

After each command the volume of every well it touched is logged as telemetry
vol_<labware>_<well> (µL), tips picked up as tips_used, a heater-shaker's temperature as
hs<slot>_temp_c, a read's absorbance as od_<labware>_<well>_<nm> and an analysis's peaks as
area_<labware>_<well>_<n>, so perception and --watch can follow them, each at the time on
the protocol's clock when the command ended (outside a protocol run, at the command's number).
"""
import json
import os
import socket
import sys

import labmate
from opentrons.types import Point, Location, LocationLabware, Mount
from opentrons.protocols.api_support.types import APIVersion

__all__ = ["ProtocolContext", "InstrumentContext", "Labware", "Well", "Liquid", "TemperatureModuleContext",
           "MagneticModuleContext", "ThermocyclerContext", "HeaterShakerContext", "AbsorbanceReaderContext",
           "Analysis", "CommandError", "OutOfTipsError", "UnsupportedError", "APIVersion", "MAX_SUPPORTED_VERSION",
           "APIVersionError", "Parameters", "ParameterContext", "ALL", "SINGLE", "COLUMN", "ROW", "PARTIAL_COLUMN", "QUADRANT"]

MAX_SUPPORTED_VERSION = APIVersion(2, 15)
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class UnsupportedError(Exception):
    """A name of the Opentrons API that labmate's bench twin does not model."""


class _UnsupportedAttribute(UnsupportedError, AttributeError):
    pass


class CommandError(Exception):
    """A command the bench refused; line is the protocol line that sent it."""

    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


class OutOfTipsError(CommandError):
    """No tip left in a pipette's tip racks."""


_OURS = {}  # code file name → whether it is this package's


def _ours(name):
    v = _OURS.get(name)
    if v is None:
        v = _OURS[name] = os.path.abspath(name).startswith(_PKG + os.sep)
    return v


def _caller_line():
    f = sys._getframe(1)
    while f is not None and _ours(f.f_code.co_filename):
        f = f.f_back
    return f.f_lineno if f is not None else 0


def _refuse(owner, name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _UnsupportedAttribute("line %d: %s.%s is not modelled by labmate's bench twin" % (_caller_line(), owner, name))


def _unsupported(what):
    raise UnsupportedError("line %d: %s is not modelled by labmate's bench twin" % (_caller_line(), what))


class _Bench:
    """One connection to the session's bench: a JSON command per line, a JSON reply per line."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except OSError as exc:
            self.sock.close()
            raise ConnectionError("labmate: no bench at %s (%s): run protocols with labmate lab simulate or "
                                  "labmate lab run" % (path, exc.strerror or exc)) from None
        self.replies = self.sock.makefile("rb")
        self.tips = 0
        self.done = 0  # commands answered
        self.on_step = None
        self.last = {}

    def do(self, name, args, line=None):
        if line is None:
            line = _caller_line()
        self.sock.sendall(json.dumps({"name": name, "args": args, "line": line}).encode() + b"\n")
        raw = self.replies.readline()
        if not raw:
            raise ConnectionError("labmate: the bench closed the connection")
        rep = json.loads(raw)
        err = rep.get("error")
        if err:
            msg = err["message"]
            if " left in the tip racks" in msg:
                raise OutOfTipsError(msg, line)
            raise CommandError(msg, line)
        ev = rep["event"]
        # Samples are on the protocol's clock (when the command ended), or outside a protocol
        # run at the command's number: a protocol that mixes the same well 500 times moves on,
        # and is not a loop that stopped converging.
        self.done += 1
        t = self.done
        if "start_s" in ev or "seconds" in ev:
            t = (ev.get("start_s") or 0) + (ev.get("seconds") or 0)
        for ref, v in (ev.get("volumes_ul") or {}).items():
            if self.last.get(ref) != v:  # a value that did not change is no news
                self.last[ref] = v
                labmate.log("vol_" + ref.replace("/", "_"), v, t)
        steps = ev.get("steps") or ()
        picked = sum(1 for s in steps if s["action"] == "pick_up_tip")
        if picked:
            self.tips += picked
            labmate.log("tips_used", self.tips, t)
        if self.on_step is not None:
            for s in steps:
                self.on_step(s)
        mod = ev.get("module")
        if mod and mod["model"] == "heaterShakerModuleV1":
            labmate.log("hs%d_temp_c" % mod["slot"], mod.get("temperature_c", 0), t)
        reading = ev.get("reading")
        if reading:
            for w in reading["wells"]:
                if w.get("path_cm"):
                    for nm, od in zip(reading["wavelengths_nm"], w["od"]):
                        labmate.log("od_%s_%s_%g" % (reading["labware"], w["well"], nm), od, t)
        chrom = ev.get("chromatogram")
        if chrom:
            for i, p in enumerate(chrom["peaks"]):
                labmate.log("area_%s_%d" % (chrom["well"].replace("/", "_"), i), p["area"], t)
        for w in (ev.get("warnings") or []) + ((reading or {}).get("warnings") or []):
            print("line %d: warning: %s" % (line, w), file=sys.stderr)
        return rep


class Liquid:
    """A liquid define_liquid made: what load_liquid puts in wells."""

    def __init__(self, name, description, display_color, concentrations):
        self.name, self.description, self.display_color = name, description, display_color
        self.concentrations = concentrations

    def __repr__(self):
        return "Liquid(%r)" % self.name


# The OT-2 deck: each slot's front-left corner (mm).
_SLOTS = {1: (0.0, 0.0), 2: (132.5, 0.0), 3: (265.0, 0.0), 4: (0.0, 90.5), 5: (132.5, 90.5), 6: (265.0, 90.5),
          7: (0.0, 181.0), 8: (132.5, 181.0), 9: (265.0, 181.0), 10: (0.0, 271.5), 11: (132.5, 271.5),
          12: (265.0, 271.5)}


class _WellImpl:
    """well._impl, well._core and well.geometry: the well's geometry as Opentrons' internals
    have it (_depth, _width, _length, _diameter, max_volume), and what a Well subclass takes."""

    def __init__(self, well):
        self._well = well
        self._depth, self._diameter = well.depth, well.diameter
        self._width, self._length = well.width, well.length
        self.max_volume = well.max_volume

    def bottom(self, z=0.0):
        return self._well.bottom(z).point

    def top(self, z=0.0):
        return self._well.top(z).point

    def center(self):
        return self._well.center().point

    def __getattr__(self, name):
        _refuse("Well geometry", name)


class Well:
    """A well of labware, with its geometry from the definition (mm, µL)."""

    def __init__(self, labware, name=None, geo=None, *args, **kw):
        if isinstance(labware, _WellImpl) or isinstance(name, _WellImpl):  # a Well subclass made from well._impl
            src = (labware if isinstance(labware, _WellImpl) else name)._well
            self.parent, self.well_name, self._ref = src.parent, src.well_name, src._ref
            self._geo, self._has_tip = src._geo, src._has_tip
            return
        self.parent, self.well_name = labware, name
        self._ref = labware._name + "/" + name
        self._geo = {(k.lower() if k in ("X", "Y", "Z") else k): v for k, v in (geo or {}).items()}
        self._has_tip = bool(labware.is_tiprack)

    @property
    def display_name(self):
        return "%s of %s on %s" % (self.well_name, self.parent._display, self.parent._slot)

    @property
    def _impl(self):
        return _WellImpl(self)

    _core = _impl
    geometry = _impl

    @property
    def api_version(self):
        return self.parent._ctx.api_version

    @property
    def diameter(self):
        return self._geo.get("diameter")

    @property
    def length(self):
        return self._geo.get("xDimension")

    @property
    def width(self):
        return self._geo.get("yDimension")

    @property
    def depth(self):
        return float(self._geo.get("depth", 0))

    @property
    def max_volume(self):
        return float(self._geo.get("totalLiquidVolume", 0))

    @property
    def has_tip(self):
        return self._has_tip

    @has_tip.setter
    def has_tip(self, value):
        self._has_tip = bool(value)

    def _bottom_point(self):
        ox, oy = self.parent._origin()
        return Point(ox + self._geo.get("x", 0), oy + self._geo.get("y", 0), self._geo.get("z", 0))

    def top(self, z=0.0):
        return Location(self._bottom_point() + Point(0, 0, self.depth + z), self)

    def bottom(self, z=0.0):
        return Location(self._bottom_point() + Point(0, 0, z), self)

    def center(self):
        return Location(self._bottom_point() + Point(0, 0, self.depth / 2), self)

    def from_center_cartesian(self, x, y, z):
        half = Point((self.diameter or self.length or 0) / 2, (self.diameter or self.width or 0) / 2, self.depth / 2)
        return self.center().point + Point(x * half.x, y * half.y, z * half.z)

    def _from_center_cartesian(self, x, y, z):
        # The Opentrons API keeps the private name for protocols written before 2.8 (the
        # Labware Creator's test protocol calls it).
        return self.from_center_cartesian(x, y, z)

    def load_liquid(self, liquid, volume):
        if not isinstance(liquid, Liquid):
            raise TypeError("load_liquid: %r is not a Liquid from protocol.define_liquid" % (liquid,))
        self.parent._ctx._bench.do("load_liquid", {"well": self._ref, "volume": float(volume),
                                                   "concentrations": liquid.concentrations})

    def __repr__(self):
        return self.display_name

    def __getattr__(self, name):
        _refuse("Well", name)


class Labware:
    """Labware on the deck, its wells addressed as the Opentrons API does."""

    def __init__(self, ctx, rep, slot):
        self._ctx, self._name, self._slot = ctx, rep["name"], str(slot)
        self._display = rep["display_name"]
        self._def = rep.get("definition") or {}
        params = self._def.get("parameters") or {}
        self.load_name = rep["load_name"]
        self.is_tiprack = rep["is_tiprack"]
        self._label = None
        wells = self._def.get("wells") or {}
        self._columns = [[Well(self, n, wells.get(n)) for n in col] for col in rep["ordering"]]
        self._wells = [w for col in self._columns for w in col]
        self._by_name = {w.well_name: w for w in self._wells}
        # A row is the wells whose names share a letter, in the definition's order (as the
        # Opentrons API groups them): an irregular rack's row B is every B well, wherever it is.
        rows = {}
        for w in self._wells:
            rows.setdefault(w.well_name.rstrip("0123456789"), []).append(w)
        self._rows = list(rows.values())
        self._params = params
        self.tip_length = float(params.get("tipLength", 0) or 0)
        for w in self._wells:
            ctx._wells_by_ref[w._ref] = w

    def _origin(self):
        try:
            x, y = _SLOTS[int(self._slot)]
        except (ValueError, KeyError):
            x, y = 0.0, 0.0
        off = self._def.get("cornerOffsetFromSlot") or {}
        return x + off.get("x", 0), y + off.get("y", 0)

    @property
    def name(self):
        return self._label or self.load_name

    @property
    def parent(self):
        return self._slot

    @property
    def api_version(self):
        return self._ctx.api_version

    @property
    def parameters(self):
        return dict(self._params)

    @property
    def uri(self):
        return "%s/%s/%s" % (self._def.get("namespace") or "opentrons", self.load_name, self._def.get("version") or 1)

    @property
    def quirks(self):
        return []

    @property
    def magdeck_engage_height(self):
        return self._params.get("magneticModuleEngageHeight")

    @property
    def highest_z(self):
        return float((self._def.get("dimensions") or {}).get("zDimension", 0))

    @property
    def calibrated_offset(self):
        x, y = self._origin()
        return Point(x, y, 0)

    def set_offset(self, x, y, z):
        pass  # the twin has no calibration to offset

    def set_calibration(self, delta):
        pass

    def well(self, idx):
        return self._wells[idx] if isinstance(idx, int) else self[idx]

    def wells(self, *names):
        if not names:
            return list(self._wells)
        return [self._wells[n] if isinstance(n, int) else self[n] for n in names]

    def wells_by_name(self):
        return dict(self._by_name)

    wells_by_index = wells_by_name

    def rows(self, *index):
        if not index:
            return [list(r) for r in self._rows]
        return [self._rows[i] if isinstance(i, int) else self.rows_by_name()[i] for i in index]

    def rows_by_name(self):
        return {r[0].well_name.rstrip("0123456789"): list(r) for r in self._rows}

    rows_by_index = rows_by_name

    def columns(self, *index):
        if not index:
            return [list(c) for c in self._columns]
        return [self._columns[i] if isinstance(i, int) else self.columns_by_name()[str(i)] for i in index]

    def columns_by_name(self):
        return {c[0].well_name.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZ"): list(c) for c in self._columns}

    columns_by_index = columns_by_name

    def next_tip(self, num_tips=1, starting_tip=None):
        """The first well from which num_tips tips down a column are present, or None."""
        started = starting_tip is None
        for col in self._columns:
            for r, w in enumerate(col):
                started = started or w is starting_tip
                if started and r + num_tips <= len(col) and all(x._has_tip for x in col[r:r + num_tips]):
                    return w
        return None

    def use_tips(self, start_well, num_channels=1):
        col = next(c for c in self._columns if start_well in c)
        r = col.index(start_well)
        for w in col[r:r + num_channels]:
            w._has_tip = False

    def previous_tip(self, num_tips=1):
        for col in reversed(self._columns):
            for w in reversed(col):
                if not w._has_tip:
                    return w
        return None

    def return_tips(self, start_well, num_channels=1):
        col = next(c for c in self._columns if start_well in c)
        r = col.index(start_well)
        for w in col[r:r + num_channels]:
            w._has_tip = True

    def reset(self):
        """A tip rack's every well holds a fresh tip again, for the twin too."""
        if self.is_tiprack:
            self._ctx._bench.do("reset_tipracks", {"label": self._name})
        self._reset_local()

    def _reset_local(self):
        for w in self._wells:
            w._has_tip = bool(self.is_tiprack)

    def top(self, z=0.0):
        x, y = self._origin()
        return Location(Point(x, y, self.highest_z + z), self)

    def __getitem__(self, name):
        if isinstance(name, int):
            return self._wells[name]
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError("%s has no well %r" % (self, name)) from None

    def __repr__(self):
        return "%s on %s" % (self._display, self._slot)

    def __getattr__(self, name):
        _refuse("Labware", name)


class _Trash(Labware):
    """The fixed trash in slot 12."""

    def __init__(self, ctx):
        rep = {"name": "trash", "display_name": "Opentrons Fixed Trash", "load_name": "opentrons_1_trash_1100ml_fixed",
               "is_tiprack": False, "ordering": [["A1"]],
               "definition": {"wells": {"A1": {"depth": 0, "totalLiquidVolume": 1100000, "shape": "rectangular",
                                               "xDimension": 172.86, "yDimension": 165.86, "x": 82.84, "y": 80, "z": 82}},
                              "dimensions": {"zDimension": 82}}}
        Labware.__init__(self, ctx, rep, 12)
        self._by_name["A1"]._ref = "trash"


def _well_of(loc):
    """The Well a location is in (a Well, a Location in a well), else None."""
    if isinstance(loc, Location):
        loc = loc.labware.object
    if isinstance(loc, Well):
        return loc
    if isinstance(loc, Labware):
        return loc.wells()[0]
    return None


def _well(loc, what):
    w = _well_of(loc)
    if w is None:
        raise TypeError("line %d: %s: %r is not a well (labware['A1']) or a place in one (well.top())"
                        % (_caller_line(), what, loc))
    return w


def _flat(arg, what):
    if isinstance(arg, (list, tuple)):
        out = []
        for a in arg:
            out.extend(_flat(a, what))
        return out
    if isinstance(arg, Labware) and not isinstance(arg, _Trash):
        return list(arg.wells())
    return [_well(arg, what)]


class _Rates:
    """flow_rate and speed: aspirate, dispense, blow_out (µL/s or mm/s), settable."""

    def __init__(self, aspirate, dispense, blow_out):
        self.aspirate, self.dispense, self.blow_out = aspirate, dispense, blow_out

    def __repr__(self):
        return "aspirate %g, dispense %g, blow_out %g" % (self.aspirate, self.dispense, self.blow_out)


class _Clearance:
    def __init__(self):
        self.aspirate, self.dispense = 1.0, 1.0


# Pipette name specs (Opentrons shared-data, Apache-2.0): channels, min, max µL, and the default
# aspirate, dispense and blow-out flow rates (µL/s) before and from API 2.6.
_PIPETTES = {
    "p10_single": (1, 1, 10, (5, 10, 1000), None),
    "p10_multi": (8, 1, 10, (5, 10, 1000), None),
    "p50_single": (1, 5, 50, (25, 50, 1000), None),
    "p50_multi": (8, 5, 50, (25, 50, 1000), None),
    "p300_single": (1, 30, 300, (150, 300, 1000), None),
    "p300_multi": (8, 30, 300, (150, 300, 1000), None),
    "p1000_single": (1, 100, 1000, (500, 1000, 1000), None),
    "p20_single_gen2": (1, 1, 20, (3.78, 3.78, 3.78), (7.56, 7.56, 7.56)),
    "p300_single_gen2": (1, 20, 300, (46.43, 46.43, 46.43), (92.86, 92.86, 92.86)),
    "p1000_single_gen2": (1, 100, 1000, (137.35, 137.35, 137.35), (274.7, 274.7, 274.7)),
    "p20_multi_gen2": (8, 1, 20, (7.6, 7.6, 7.6), None),
    "p300_multi_gen2": (8, 20, 300, (94, 94, 94), None),
}

_TRANSFER_KEYS = {"new_tip", "trash", "touch_tip", "blow_out", "blowout_location", "mix_before", "mix_after",
                  "air_gap", "disposal_volume", "carryover", "gradient", "drop_tip_strategy"}


def _mix_option(opt, name):
    if opt is None:
        return None
    if not (isinstance(opt, (list, tuple)) and len(opt) == 2):
        raise TypeError("line %d: %s=%r is not (repetitions, volume)" % (_caller_line(), name, opt))
    return [float(opt[0]), float(opt[1])]


# configure_nozzle_layout's styles (Opentrons' NozzleLayout), importable from protocol_api.
ALL, SINGLE, COLUMN, ROW, PARTIAL_COLUMN, QUADRANT = "ALL", "SINGLE", "COLUMN", "ROW", "PARTIAL_COLUMN", "QUADRANT"


class InstrumentContext:
    """A pipette on a mount."""

    def __init__(self, ctx, name, mount, tip_racks):
        channels, vmin, vmax, flow, flow26 = _PIPETTES[name]
        self._ctx, self.name, self._mount = ctx, name, mount
        self.channels, self.min_volume, self.max_volume = channels, vmin, vmax  # numbers as the specs have them
        f = flow26 if flow26 and ctx._minor >= 6 else flow
        self.flow_rate = _Rates(*f)
        self.speed = _Rates(*(x / 10.0 for x in f))
        self.well_bottom_clearance = _Clearance()
        self._tip_racks = list(tip_racks)
        self._starting_tip = None
        self._where = None  # the well the pipette is at, for a command without a location
        self._volume = 0.0  # what the tips hold, µL per channel (air included)
        self._tip = None  # the rack well of the attached tip
        self._nozzles, self._primary = 0, "A1"  # configure_nozzle_layout: active channels (0: all)
        self.default_speed = 400.0
        self.trash_container = ctx.fixed_trash
        self.return_height = 0.5

    @property
    def mount(self):
        return self._mount

    @property
    def model(self):
        return self.name.replace("_gen2", "_v2.0") if "gen2" in self.name else self.name + "_v1.5"

    @property
    def type(self):
        return "multi" if self.channels > 1 else "single"

    @property
    def api_version(self):
        return self._ctx.api_version

    @property
    def tip_racks(self):
        return self._tip_racks

    @tip_racks.setter
    def tip_racks(self, racks):
        racks = list(racks)
        self._ctx._bench.do("set_tip_racks", {"mount": self._mount, "tip_racks": [r._name for r in racks]})
        self._tip_racks = racks

    @property
    def starting_tip(self):
        return self._starting_tip

    @starting_tip.setter
    def starting_tip(self, well):
        if well is not None:
            self._ctx._bench.do("starting_tip", {"mount": self._mount, "well": _well(well, "starting_tip")._ref})
        self._starting_tip = well

    @property
    def has_tip(self):
        return self._tip is not None

    @property
    def current_volume(self):
        return self._volume

    @property
    def working_volume(self):
        return self._capacity()

    @property
    def hw_pipette(self):
        return {"has_tip": self.has_tip, "working_volume": self._capacity(), "max_volume": self.max_volume,
                "min_volume": self.min_volume, "channels": self.channels, "name": self.name, "model": self.model,
                "tip_length": self._tip.parent.tip_length if self._tip is not None else 0.0,
                "current_volume": self._volume, "available_volume": self._capacity() - self._volume,
                "pipette_id": "labmate-twin-" + self._mount}

    @property
    def _implementation(self):
        return _InstrumentImpl(self)

    @property
    def _last_tip_picked_up_from(self):
        return self._tip

    def _capacity(self):
        if self._tip is not None:
            return min(self._tip.max_volume or self.max_volume, self.max_volume)
        return self.max_volume

    def _do(self, name, args):
        args["mount"] = self._mount
        return self._ctx._bench.do(name, args)

    def _at(self, location, what):
        if location is None:
            if self._where is None:
                raise TypeError("line %d: %s: no location given and the pipette has not been at a well yet"
                                % (_caller_line(), what))
            return self._where
        w = _well_of(location)
        if w is None:
            raise TypeError("line %d: %s: %r is not a well or a place in one" % (_caller_line(), what, location))
        self._where = w
        return w

    def pick_up_tip(self, location=None, presses=None, increment=None, prep_after=None):
        args = {}
        if isinstance(location, Labware):
            w = self._cluster(location) if self._nozzles else location.next_tip(self.channels)
            if w is None:
                raise OutOfTipsError("line %d: no tip left in %s" % (_caller_line(), location), _caller_line())
            args["well"] = w._ref
        elif location is not None:
            args["well"] = _well(location, "pick_up_tip")._ref
        self._do("pick_up_tip", args)
        return self

    @property
    def active_channels(self):
        return self._nozzles or self.channels

    def configure_nozzle_layout(self, style, start=None, end=None, front_right=None, back_left=None, tip_racks=None):
        """Which nozzles take tips (API level 2.16; SINGLE and PARTIAL_COLUMN from 2.20), as
        the Opentrons API checks them; the tip racks become tip_racks (none if not given)."""
        level, line = self._ctx._level, _caller_line()
        if level < APIVersion(2, 16):
            raise APIVersionError("line %d: configure_nozzle_layout requires API level 2.16 (the protocol declares %s)" % (line, level))
        style = str(getattr(style, "value", style)).upper()
        if style == QUADRANT:
            raise UnsupportedError("line %d: Nozzle layout configuration of style QUADRANT is currently unsupported." % line)
        if style not in (ALL, SINGLE, COLUMN, ROW, PARTIAL_COLUMN):
            raise ValueError("line %d: %r is not a nozzle layout" % (line, style))
        if level < APIVersion(2, 20) and style not in (COLUMN, ALL):
            raise APIVersionError("line %d: Nozzle layout configuration of style %s requires API level 2.20" % (line, style))
        if style in (COLUMN, ROW) and self.channels != 96:
            raise ValueError("line %d: %s configuration is only supported on 96-Channel pipettes." % (line, style))
        if style == PARTIAL_COLUMN and self.channels != 8:
            raise ValueError("line %d: Partial column configuration is only supported on 8-Channel pipettes." % line)
        n = 0
        if style != ALL:
            if start is None:
                raise ValueError("line %d: Cannot configure a nozzle layout of style %s without a starting nozzle." % (line, style))
            if start not in ("A1", "H1") or start == "H1" and self.channels == 1:
                raise ValueError("line %d: starting nozzle %r is not a nozzle of %s (A1 or H1)" % (line, start, self.name))
            n = 1
        if style == PARTIAL_COLUMN:
            rows = "ABCDEFGH"
            if end is None:
                raise ValueError("line %d: Partial column configurations require the 'end' parameter." % line)
            if end[:1] not in rows or end[1:] != "1" or end[0] == start[0]:
                raise ValueError("line %d: end nozzle %r: not in column 1, or in the start's row" % (line, end))
            if start == "H1" and end[0] == "A" or start == "A1" and end[0] == "H":
                raise ValueError("line %d: A partial column configuration with 'start'=%s cannot have its 'end' in row %s. "
                                 "Use `ALL` configuration to utilize all nozzles." % (line, start, end[0]))
            n = abs(rows.index(end[0]) - rows.index(start[0])) + 1
        if n == self.channels:
            n = 0
        self._do("configure_nozzle_layout", {"nozzles": n, "start": start or "A1"})
        self._nozzles, self._primary = n, start or "A1"
        self.tip_racks = list(tip_racks or [])

    def _cluster(self, rack):
        """The rack well a partial nozzle layout's primary nozzle takes its next tips at, as the
        Opentrons API searches: primary H1 from the top of each column down, A1 from the
        bottom up; None if no column has them."""
        n = self._nozzles
        for col in rack._columns:
            starts = range(n - 1, len(col)) if self._primary == "H1" else range(len(col) - n, -1, -1)
            for r in starts:
                run = col[r - n + 1:r + 1] if self._primary == "H1" else col[r:r + n]
                if all(x._has_tip for x in run):
                    return col[r]
        return None

    def _picked(self, step):
        w = self._ctx._wells_by_ref.get(step["well"])
        if w is None:
            return
        if step["action"] == "pick_up_tip":
            self._tip, self._volume = w, 0.0
            self._mark(w, step.get("channels") or 1, False)
        elif step["action"] == "return_tip" and self._ctx.api_version < APIVersion(2, 2):
            # Below API 2.2 a tip put back in its rack was tracked as unused again; from 2.2 on
            # tip tracking keeps it used (Well.has_tip stays False), as the twin does.
            self._mark(w, step.get("channels") or 1, True)

    def _mark(self, w, n, present):
        col = next((c for c in w.parent._columns if w in c), [w])
        r = col.index(w)
        for x in (col[max(r - n + 1, 0):r + 1] if self._nozzles and self._primary == "H1" else col[r:r + n]):
            x._has_tip = present

    def drop_tip(self, location=None, home_after=None):
        args = {}
        w = _well_of(location) if location is not None else None
        if w is not None and w.parent.is_tiprack:
            args["well"] = w._ref
        self._do("drop_tip", args)
        self._tip, self._volume = None, 0.0
        return self

    def return_tip(self, home_after=None):
        self._do("return_tip", {})
        self._tip, self._volume = None, 0.0
        return self

    def reset_tipracks(self):
        self._do("reset_tipracks", {})
        for r in self._tip_racks:
            r._reset_local()

    def _flow(self, kind, rate):
        return float(getattr(self.flow_rate, kind)) * float(rate)

    def aspirate(self, volume=None, location=None, rate=1.0):
        w = _well_of(location) if location is not None else self._where
        if isinstance(location, Location) and w is None or isinstance(w, Well) and w._ref == "trash":
            # air, at a place that is no well (or the trash's): the tip takes air
            v = float(volume) if volume else max(self._capacity() - self._volume, 0.0)
            print("line %d: warning: aspirating %g µL at %r, which is no well: the tip takes air" % (_caller_line(), v, location),
                  file=sys.stderr)
            return self.air_gap(v)
        well = self._at(location, "aspirate")
        v = float(volume) if volume else max(self._capacity() - self._volume, 0.0)
        self._do("aspirate", {"volume": v, "well": well._ref, "flow_rate": self._flow("aspirate", rate)})
        self._volume += v
        return self

    def dispense(self, volume=None, location=None, rate=1.0, push_out=None):
        well = self._at(location, "dispense")
        v = float(volume) if volume else 0.0
        self._do("dispense", {"volume": v, "well": well._ref, "flow_rate": self._flow("dispense", rate)})
        self._volume = max(self._volume - v, 0.0) if v else 0.0
        return self

    def mix(self, repetitions=1, volume=None, location=None, rate=1.0):
        well = self._at(location, "mix")
        v = float(volume) if volume else max(self._capacity() - self._volume, 0.0)
        self._do("mix", {"repetitions": int(repetitions), "volume": v, "well": well._ref,
                         "flow_rate": self._flow("aspirate", rate)})
        return self

    def blow_out(self, location=None):
        args = {}
        if location is not None or self._where is not None:
            args["well"] = self._at(location, "blow_out")._ref
        self._do("blow_out", args)
        self._volume = 0.0
        return self

    def air_gap(self, volume=None, height=None):
        v = float(volume) if volume else max(self._capacity() - self._volume, 0.0)
        self._do("air_gap", {"volume": v})
        self._volume += v
        return self

    def touch_tip(self, location=None, radius=1.0, v_offset=-1.0, speed=60.0):
        if self._tip is None:
            raise CommandError("line %d: touch_tip: no tip on the %s pipette" % (_caller_line(), self._mount),
                               _caller_line())
        well = self._at(location, "touch_tip")
        self._ctx._note("touch_tip %s (%s)" % (well._ref, self._mount), 2.0)
        return self

    def move_to(self, location, force_direct=False, minimum_z_height=None, speed=None, publish=True):
        w = _well_of(location)
        if w is not None:
            self._where = w
        self._ctx._note("move_to %s (%s)" % (w._ref if w is not None else location, self._mount), 1.0)
        return self

    def home(self):
        self._ctx._note("home %s" % self._mount, 3.0)
        return self

    def home_plunger(self):
        return self

    def delay(self, seconds=0, minutes=0):
        self._ctx.delay(seconds, minutes)

    def prepare_to_aspirate(self):
        pass

    def _plan(self, name, volume, source, dest, kw):
        unknown = set(kw) - _TRANSFER_KEYS
        if unknown:  # the Opentrons API takes **kwargs and ignores these too
            self._ctx._note("warning: %s(%s) ignored: not keywords of the Opentrons API"
                            % (name, ", ".join(k + "=" for k in sorted(unknown))))
            print("line %d: warning: %s(%s) ignored: not keywords of the Opentrons API"
                  % (_caller_line(), name, ", ".join(k + "=" for k in sorted(unknown))), file=sys.stderr)
        new_tip = kw.get("new_tip", "once")
        src, dst = _flat(source, name), _flat(dest, name)
        if self.channels > 1 and not self._nozzles:  # a full nozzle layout's plan
            src, dst = self._first_rows(src, "source"), self._first_rows(dst, "target")
            if not src or not dst:
                return self  # below API level 2.2, no first-row well: the plan moves nothing
        args = {"source": [w._ref for w in src], "dest": [w._ref for w in dst], "new_tip": str(new_tip).lower()}
        n = max(len(src), len(dst))
        if isinstance(volume, tuple) and len(volume) == 2 and n > 1 and name != "consolidate":
            a, b = float(volume[0]), float(volume[1])
            args["volumes"] = [a + (b - a) * i / (n - 1) for i in range(n)]
        elif isinstance(volume, (list, tuple)):
            args["volumes"] = [float(v) for v in volume]
        else:
            args["volume"] = float(volume)
        if "volumes" in args and len(args["volumes"]) != n and name == "transfer":
            raise ValueError("line %d: %s: %d volumes for %d wells" % (_caller_line(), name, len(args["volumes"]), n))
        for opt in ("mix_before", "mix_after"):
            m = _mix_option(kw.get(opt), opt)
            if m and m[0] >= 1 and m[1] > 0:
                args[opt] = m
        if kw.get("air_gap"):
            args["air_gap"] = float(kw["air_gap"])
        if kw.get("blow_out"):
            args["blow_out"] = str(kw.get("blowout_location") or "trash")
        if kw.get("disposal_volume") is not None:
            args["disposal_volume"] = float(kw["disposal_volume"])
        if kw.get("trash", True) is False:
            args["return_tips"] = True
        if args["new_tip"] == "never" and self._tip is None:
            raise CommandError("line %d: %s(new_tip='never'): no tip on the %s pipette" % (_caller_line(), name, self._mount),
                               _caller_line())
        if args["new_tip"] != "never" and self._tip is not None:
            raise CommandError("line %d: %s(new_tip=%r): the %s pipette already has a tip" % (_caller_line(), name, new_tip, self._mount),
                               _caller_line())
        self._do(name, args)
        if args["new_tip"] != "never":
            self._tip, self._volume = None, 0.0
        if dst:
            self._where = dst[-1]
        return self

    def _first_rows(self, wells, what):
        """The wells a multi-channel pipette's first channel addresses, as the Opentrons API
        plans its transfers: those in the first row of their labware (the first two of a
        384-well plate from API level 2.2), the other channels reaching the rest of each
        column. From 2.2 on, none left is the API's error."""
        level = self._ctx._level
        kept = []
        for w in wells:
            rows = w.parent._rows
            n = 2 if level >= APIVersion(2, 2) and w.parent.parameters.get("format") == "384Standard" else 1
            if any(w.well_name == r.well_name for row in rows[:n] for r in row):
                kept.append(w)
        if not kept and level >= APIVersion(2, 2):
            raise RuntimeError("line %d: Invalid %s for multichannel transfer: %s" % (_caller_line(), what, wells))
        return kept

    def transfer(self, volume, source, dest, **kw):
        return self._plan("transfer", volume, source, dest, kw)

    def distribute(self, volume, source, dest, **kw):
        return self._plan("distribute", volume, source, dest, kw)

    def consolidate(self, volume, source, dest, **kw):
        return self._plan("consolidate", volume, source, dest, kw)

    def __repr__(self):
        return "%s on %s mount" % (self.name, self._mount)

    def __getattr__(self, name):
        _refuse("InstrumentContext", name)


# The hardware's pipette configuration (Opentrons shared-data pipetteModelSpecs, Apache-2.0;
# GEN1 v1.5, GEN2 v2.1): pick_up_current, pick_up_distance, pick_up_increment,
# pick_up_presses, pick_up_speed, plunger_current, drop_tip_current, drop_tip_speed.
_HW_CONFIG_FIELDS = ("pick_up_current", "pick_up_distance", "pick_up_increment", "pick_up_presses", "pick_up_speed",
                     "plunger_current", "drop_tip_current", "drop_tip_speed")
_HW_CONFIGS = {
    "p10_single": (0.1, 10, 1.0, 3, 30, 0.3, 0.5, 5), "p10_multi": (0.55, 10, 3.0, 3, 30, 0.5, 0.5, 5),
    "p50_single": (0.1, 10, 1.0, 3, 30, 0.3, 0.5, 5), "p50_multi": (0.8, 10, 3.0, 3, 30, 0.5, 0.5, 5),
    "p300_single": (0.1, 10, 1.0, 3, 30, 0.3, 0.5, 5), "p300_multi": (0.9, 10, 3.0, 3, 30, 0.5, 0.5, 5),
    "p1000_single": (0.15, 15, 1.0, 3, 30, 0.5, 0.7, 5),
    "p20_single_gen2": (0.1, 14, 0.0, 1, 10, 1.0, 1.0, 15), "p20_multi_gen2": (0.6, 11, 0.0, 1, 10, 1.0, 1.25, 15),
    "p300_single_gen2": (0.125, 17, 0.0, 1, 10, 1.0, 1.25, 7), "p300_multi_gen2": (0.8, 11, 0.0, 1, 10, 1.0, 1.25, 7.5),
    "p1000_single_gen2": (0.17, 17, 0.0, 1, 10, 1.0, 1.25, 7),
}


class _HWConfig:
    """A hardware pipette's config: its defaults, and what update_config_item set."""

    def __init__(self, name, values):
        self.name = name
        for k, v in values.items():
            setattr(self, k, v)

    def __getattr__(self, name):
        _refuse("hardware pipette config", name)


class _HWPipette:
    """A pipette of the hardware controller, as protocols reach it for its config."""

    def __init__(self, ctx, mount):
        self._ctx, self._mount = ctx, mount

    @property
    def config(self):
        pip = self._ctx._instruments.get(self._mount)
        name = getattr(pip, "name", "")
        values = dict(zip(_HW_CONFIG_FIELDS, _HW_CONFIGS.get(name, ())))
        values.update(self._ctx._hw_config.get(self._mount, {}))
        values.update(max_volume=getattr(pip, "max_volume", None), min_volume=getattr(pip, "min_volume", None),
                      channels=getattr(pip, "channels", None))
        return _HWConfig(name, values)

    def update_config_item(self, key, value):
        self._ctx._hw_config.setdefault(self._mount, {})[key] = value
        self._ctx._note("hardware: %s pipette %s = %r (no effect on the twin's liquid)" % (self._mount, key, value))

    def __getattr__(self, name):
        _refuse("hardware pipette", name)


class _Attached(dict):
    def __init__(self, ctx):
        super().__init__()
        self._ctx = ctx

    def __getitem__(self, mount):
        m = str(mount.value if isinstance(mount, Mount) else mount).lower()
        if m not in self._ctx._instruments:
            raise KeyError("no pipette on the %s mount" % m)
        return _HWPipette(self._ctx, m)


class _Hardware:
    """ctx._hw_manager.hardware: what protocols reach of the robot's hardware controller."""

    is_simulator = True

    def __init__(self, ctx):
        self._ctx = ctx
        self._attached_instruments = _Attached(ctx)
        self.hardware = self

    def set_lights(self, button=None, rails=None):
        if rails is not None:
            self._ctx.set_rail_lights(rails)

    def get_lights(self):
        return {"button": True, "rails": self._ctx._rail_lights}

    def get_pipette(self, mount):
        m = str(mount.value if isinstance(mount, Mount) else mount).lower()
        return self._ctx._instruments[m].hw_pipette

    def get_hardware(self):
        return self

    @property
    def _hw_manager(self):
        return self

    def __getattr__(self, name):
        _refuse("hardware", name)


class _InstrumentImpl:
    """pipette._implementation: its mount."""

    def __init__(self, pip):
        self._pip = pip

    def get_mount(self):
        return Mount(self._pip._mount)

    @property
    def _hw_manager(self):
        return _Hardware(self._pip._ctx)

    def __getattr__(self, name):
        _refuse("InstrumentContext._implementation", name)


class _MaxSpeeds(dict):
    """protocol.max_speeds: axis → mm/s; the twin's clock does not use them."""


# The Flex's coordinate names of the OT-2's slots, which API level 2.15 accepts on an OT-2.
_COORDINATES = {"D1": 1, "D2": 2, "D3": 3, "C1": 4, "C2": 5, "C3": 6, "B1": 7, "B2": 8, "B3": 9,
                "A1": 10, "A2": 11, "A3": 12}


def _slot(ctx, location):
    """A deck location as the OT-2's slot ("5" for 5, "5", and from API level 2.15 "C2")."""
    if isinstance(location, str) and location.strip().upper() in _COORDINATES:
        if ctx._level < APIVersion(2, 15):
            raise APIVersionError("line %d: deck slot %r: coordinate slot names require API level 2.15 (the protocol declares %s)"
                                  % (_caller_line(), location, ctx._level))
        return str(_COORDINATES[location.strip().upper()])
    return str(location)


class _Deck(dict):
    """protocol.deck: what is in each slot, by number (and by its string)."""

    def __init__(self, ctx):
        super().__init__()
        self._ctx = ctx

    def __getitem__(self, slot):
        n = int(_slot(self._ctx, slot))
        if n == 12:
            return self._ctx.fixed_trash
        return self._ctx._labware.get(n, self._ctx._modules.get(n))

    def __contains__(self, slot):
        return self[slot] is not None

    def __delitem__(self, slot):
        n = int(_slot(self._ctx, slot))
        if n not in self._ctx._labware:
            return  # deleting an empty slot does nothing, as on the robot
        self._ctx._bench.do("unload_labware", {"slot": str(n)})
        del self._ctx._labware[n]

    def position_for(self, slot):
        x, y = _SLOTS[int(_slot(self._ctx, slot))]
        return Location(Point(x, y, 0), str(slot))

    def get_slot_center(self, slot):
        x, y = _SLOTS[int(_slot(self._ctx, slot))]
        return Point(x + 63.88, y + 42.74, 0)

    @property
    def slots(self):
        return list(_SLOTS)


_MODULE_NAMES = {
    "temperature module": "temperatureModuleV1", "tempdeck": "temperatureModuleV1",
    "temperaturemodulev1": "temperatureModuleV1", "temperature module gen2": "temperatureModuleV2",
    "temperaturemodulev2": "temperatureModuleV2",
    "magnetic module": "magneticModuleV1", "magdeck": "magneticModuleV1", "magneticmodulev1": "magneticModuleV1",
    "magnetic module gen2": "magneticModuleV2", "magneticmodulev2": "magneticModuleV2",
    "thermocycler": "thermocyclerModuleV1", "thermocycler module": "thermocyclerModuleV1",
    "thermocyclermodulev1": "thermocyclerModuleV1", "thermocycler module gen2": "thermocyclerModuleV2",
    "thermocyclermodulev2": "thermocyclerModuleV2",
    "heatershakermodulev1": "heaterShakerModuleV1", "heater-shaker module": "heaterShakerModuleV1",
    "heatershakermodule": "heaterShakerModuleV1",
    "absorbancereaderv1": "absorbanceReaderV1",
}


class ProtocolContext:
    """The bench as the Opentrons API's protocol object."""

    def __init__(self, bench, api_level="2.15"):
        self._bench = bench
        self._labware, self._modules, self._instruments = {}, {}, {}
        self._wells_by_ref = {}
        self._labels = set()
        self._liquids = 0
        self._hw_config = {}  # mount → what update_config_item set
        self._params = Parameters()
        self._synced = False
        self._level = APIVersion.from_string(api_level)
        self._minor = self._level.minor
        self.max_speeds = _MaxSpeeds()
        self.deck = _Deck(self)
        self.bundled_data = {}
        self._rail_lights = False
        self.fixed_trash = _Trash(self)
        self._commands = []
        bench.on_step = self._on_step

    def _on_step(self, step):
        mount = step.get("mount")
        pip = self._instruments.get(mount) if mount else None
        if pip is not None and step["action"] in ("pick_up_tip", "return_tip"):
            pip._picked(step)

    def _set_level(self, level):
        self._level = APIVersion.from_string(level)
        self._minor = self._level.minor
        self._bench.do("protocol", {"api_level": "%d.%d" % self._level}, line=0)

    def _note(self, text, seconds=0.0):
        self._commands.append(text)
        self._bench.do("note", {"text": text, "seconds": float(seconds)})

    def _sync(self):
        """Learn once what the bench held before: a deck set up for the protocol."""
        if self._synced:
            return
        ev = self._bench.do("deck", {})["event"]
        for rep in ev.get("labware") or ():
            self._labware.setdefault(rep["slot"], Labware(self, rep, rep["slot"]))
        for m in ev.get("modules") or ():
            cls = _MODULES.get(m["model"])
            if cls is not None:
                self._modules.setdefault(m["slot"], cls(self, m["slot"], m["model"]))
        self._synced = True

    @property
    def api_version(self):
        return self._level

    @property
    def _hw_manager(self):
        return _Hardware(self)

    @property
    def _implementation(self):
        return _Hardware(self)

    @property
    def loaded_labwares(self):
        """The labware on the deck by slot number, what the bench held before the protocol included."""
        self._sync()
        out = dict(self._labware)
        out[12] = self.fixed_trash
        return out

    @property
    def loaded_modules(self):
        self._sync()
        return dict(self._modules)

    @property
    def loaded_instruments(self):
        return dict(self._instruments)

    @property
    def rail_lights_on(self):
        return self._rail_lights

    @property
    def door_closed(self):
        return True

    def is_simulating(self):
        return True

    def commands(self):
        return list(self._commands)

    def clear_commands(self):
        self._commands = []

    def set_rail_lights(self, on):
        self._rail_lights = bool(on)
        self._note("set_rail_lights %s" % ("on" if on else "off"))

    def load_module(self, module_name, location=None, configuration=None):
        model = _MODULE_NAMES.get(str(module_name).lower(), module_name)
        if model not in _MODULES:
            _unsupported("load_module(%r)" % (module_name,))
        if configuration is not None and configuration != "semi":
            _unsupported("load_module(configuration=%r)" % (configuration,))
        if location is None:
            if not model.startswith("thermocycler"):
                raise TypeError("line %d: load_module(%r): a location (slot) is required" % (_caller_line(), module_name))
            location = 7
        slot = int(_slot(self, location))
        self._bench.do("load_module", {"module": model, "slot": str(slot)})
        self._modules[slot] = m = _MODULES[model](self, slot, model)
        return m

    def analyze(self, well):
        """labmate's extension, not Opentrons: inject a sample of well into the analysis twin."""
        return Analysis(self._bench.do("analyze", {"well": _well(well, "analyze")._ref})["event"]["chromatogram"])

    def _load(self, args, slot, label):
        if label is not None and str(label).isidentifier() and str(label) not in self._labels and str(label) != "trash":
            args["label"] = str(label)  # the twin's name for it; otherwise its slot
            self._labels.add(str(label))
        rep = self._bench.do("load_labware", args)["labware"]
        lw = Labware(self, rep, slot)
        lw._label = label
        if slot.isdigit():
            self._labware[int(slot)] = lw
        return lw

    def load_labware(self, load_name, location, label=None, namespace=None, version=None, adapter=None):
        if isinstance(location, _Adapter):
            return location.load_labware(load_name, label, namespace, version)
        if adapter is not None:
            return self.load_adapter(adapter, location, namespace).load_labware(load_name, label, namespace, version)
        slot = _slot(self, location)
        args = {"load_name": str(load_name).lower(), "slot": slot}
        if version is not None:
            args["version"] = int(version)
        return self._load(args, slot, label)

    def load_labware_from_definition(self, labware_def, location, label=None):
        slot = _slot(self, location)
        return self._load({"slot": slot, "definition": labware_def}, slot, label)

    def load_instrument(self, instrument_name, mount, tip_racks=None, replace=False):
        mount = str(mount.value if isinstance(mount, Mount) else mount).lower()
        name = str(instrument_name)
        if name not in _PIPETTES:
            _unsupported("load_instrument(%r)" % (name,))
        if replace and mount in self._instruments:
            _unsupported("load_instrument(replace=True)")
        racks = list(tip_racks or ())
        self._bench.do("load_instrument", {"instrument": name, "mount": mount, "tip_racks": [r._name for r in racks]})
        self._instruments[mount] = pip = InstrumentContext(self, name, mount, racks)
        return pip

    def _add_parameters(self, add_parameters):
        """Run the protocol's add_parameters, as the Opentrons API does before run: params
        holds each parameter's value (its default, or as --param gives it)."""
        given = self._bench.do("params", {})["event"].get("params") or {}
        pc = ParameterContext(self._level, given)
        add_parameters(pc)
        self._params = Parameters(pc._values)

    @property
    def params(self):
        if self._level < APIVersion(2, 18):
            raise APIVersionError("line %d: params requires API level 2.18 (the protocol declares %s)"
                                  % (_caller_line(), self._level))
        return self._params

    def load_adapter(self, load_name, location, namespace=None, version=None):
        """An adapter in a slot or on a module (API level 2.15): what load_labware puts the
        labware on. The twin does not model its height; the labware takes the slot."""
        if self._level < APIVersion(2, 15):
            raise APIVersionError("line %d: load_adapter requires API level 2.15 (the protocol declares %s)"
                                  % (_caller_line(), self._level))
        if str(load_name) not in _ADAPTERS:
            raise KeyError("line %d: load_adapter: %r is not an OT-2 adapter (%s)"
                           % (_caller_line(), load_name, ", ".join(sorted(_ADAPTERS))))
        return _Adapter(self, str(load_name), location)

    def define_liquid(self, name, description=None, display_color=None, concentrations=None):
        """A liquid: by default its name is one species at 1 mol/L; concentrations (species →
        mol/L, {} for a pure solvent) say what it is made of."""
        self._liquids += 1
        species = str(name) if name else "liquid %d" % self._liquids  # the API takes a name of ""
        return Liquid(name, description, display_color, {species: 1.0} if concentrations is None else dict(concentrations))

    def comment(self, msg):
        print(msg)
        self._note("comment: %s" % (msg,))

    def pause(self, msg=None):
        self._note("pause%s" % (": " + str(msg) if msg else ""))

    def resume(self):
        pass

    def delay(self, seconds=0, minutes=0, msg=None):
        """Time passing on the twin (not waited): modules hold their plates that long."""
        total = float(seconds) / 60 + float(minutes)
        if total > 0:
            self._bench.do("delay", {"minutes": total})
        if msg:
            self._commands.append("delay: " + str(msg))

    def home(self):
        self._note("home", 5.0)

    def __reduce__(self):
        raise TypeError("a bench connection is not saved: labmate.bench() gives it back")

    def __getattr__(self, name):
        _refuse("ProtocolContext", name)


class APIVersionError(Exception):
    """A call the protocol's declared API level does not have yet (as Opentrons raises)."""


class Parameters:
    """The runtime parameters' values (protocol.params), by variable name."""

    def __init__(self, values=None):
        object.__setattr__(self, "_values", dict(values or {}))
        for k, v in self._values.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        if key in self._values:
            raise AttributeError("Cannot overwrite protocol defined parameter %s" % key)
        object.__setattr__(self, key, value)

    def get_all(self):
        return dict(self._values)


class _CSVParameter:
    """A CSV runtime parameter's file (add_csv_file), its text from --param NAME=TEXT; without
    one, reading it is the error the Opentrons API gives a run with no file chosen."""

    def __init__(self, name, contents):
        self._name, self._contents = name, contents

    @property
    def contents(self):
        if self._contents is None:
            raise ValueError("line %d: CSV parameter %s needs to be set to a file for full analysis or run "
                             "(give --param %s=TEXT)" % (_caller_line(), self._name, self._name))
        return self._contents

    @property
    def file(self):
        import io
        return io.StringIO(self.contents)

    def parse_as_csv(self, detect_dialect=True):
        import csv
        import io
        return [row for row in csv.reader(io.StringIO(self.contents))]


class ParameterContext:
    """What add_parameters(parameters) declares the protocol's runtime parameters with: each
    takes its default, or the value --param VARIABLE_NAME=VALUE (or a fields.json) gives."""

    def __init__(self, api_version, given=None):
        self._api_version, self._given, self._values = api_version, dict(given or {}), {}

    def _add(self, kind, variable_name, default, minimum=None, maximum=None, choices=None):
        name = str(variable_name)
        if not name.isidentifier() or name in self._values:
            raise ValueError("line %d: %r is not a new Python identifier for a parameter" % (_caller_line(), name))
        value = self._given.get(name, default)
        try:
            value = kind(value) if kind is not bool or isinstance(value, bool) else str(value).lower() in ("true", "1", "on", "yes")
        except (TypeError, ValueError):
            raise ValueError("line %d: parameter %s: %r is not a %s" % (_caller_line(), name, value, kind.__name__))
        if choices:
            allowed = [c["value"] if isinstance(c, dict) else c for c in choices]
            if value not in allowed:
                raise ValueError("line %d: parameter %s: %r is not one of its choices %r" % (_caller_line(), name, value, allowed))
        if minimum is not None and value < minimum or maximum is not None and value > maximum:
            raise ValueError("line %d: parameter %s: %r is outside %s..%s" % (_caller_line(), name, value, minimum, maximum))
        self._values[name] = value

    def add_int(self, display_name, variable_name, default, minimum=None, maximum=None, choices=None,
                description=None, unit=None):
        self._add(int, variable_name, default, minimum, maximum, choices)

    def add_float(self, display_name, variable_name, default, minimum=None, maximum=None, choices=None,
                  description=None, unit=None):
        self._add(float, variable_name, default, minimum, maximum, choices)

    def add_bool(self, display_name, variable_name, default, description=None):
        self._add(bool, variable_name, default)

    def add_str(self, display_name, variable_name, default, choices=None, description=None):
        self._add(str, variable_name, default, choices=choices)

    def add_csv_file(self, display_name, variable_name, description=None):
        if self._api_version < APIVersion(2, 20):
            raise APIVersionError("line %d: add_csv_file requires API level 2.20" % _caller_line())
        name = str(variable_name)
        text = self._given.get(name)
        self._values[name] = _CSVParameter(name, None if text is None else str(text))


# Opentrons' OT-2 adapter definitions (shared-data labware, Apache-2.0): load_adapter's names.
_ADAPTERS = frozenset((
    "opentrons_96_deep_well_adapter", "opentrons_96_deep_well_temp_mod_adapter", "opentrons_96_flat_bottom_adapter",
    "opentrons_96_pcr_adapter", "opentrons_96_well_aluminum_block", "opentrons_aluminum_flat_bottom_plate",
    "opentrons_universal_flat_adapter"))


class _Adapter:
    """An adapter (load_adapter): a slot's or module's place for one labware."""

    def __init__(self, ctx, load_name, location):
        self._ctx, self.load_name, self._location = ctx, load_name, location
        self.child = None

    @property
    def name(self):
        return self.load_name

    @property
    def parent(self):
        return self._location

    @property
    def api_version(self):
        return self._ctx.api_version

    def load_labware(self, name, label=None, namespace=None, version=None):
        if self.child is not None:
            raise RuntimeError("line %d: %s already holds %s" % (_caller_line(), self.load_name, self.child))
        where = self._location
        if isinstance(where, _Module):
            self.child = where.load_labware(name, label, namespace, version)
        else:
            self.child = self._ctx.load_labware(name, where, label, namespace, version)
        return self.child

    def load_labware_from_definition(self, definition, label=None):
        where = self._location._slot if isinstance(self._location, _Module) else self._location
        self.child = self._ctx.load_labware_from_definition(definition, where, label)
        return self.child

    def __repr__(self):
        return "%s on %s" % (self.load_name, self._location)

    def __getattr__(self, name):
        _refuse("Labware (adapter)", name)


class _Module:
    def __init__(self, ctx, slot, model):
        self._ctx, self._slot, self._model = ctx, int(slot), model
        self.geometry = self

    def _do(self, name, args=None):
        return self._ctx._bench.do(name, dict(args or {}, slot=str(self._slot)))["event"]

    @property
    def labware(self):
        return self._ctx.loaded_labwares.get(self._slot)

    @property
    def model(self):
        return self._model

    @property
    def api_version(self):
        return self._ctx.api_version

    @property
    def parent(self):
        return str(self._slot)

    def load_labware(self, name, label=None, namespace=None, version=None, adapter=None):
        if adapter is not None:
            return self.load_adapter(adapter, namespace).load_labware(name, label, namespace, version)
        return self._ctx.load_labware(name, self._slot, label, namespace, version)

    def load_adapter(self, name, namespace=None, version=None):
        return self._ctx.load_adapter(name, self._slot, namespace, version)

    def load_labware_from_definition(self, definition, label=None):
        return self._ctx.load_labware_from_definition(definition, self._slot, label)

    def load_labware_object(self, labware):
        return labware

    def __repr__(self):
        return "%s in slot %d" % (type(self).__name__, self._slot)


class TemperatureModuleContext(_Module):
    """The Temperature Module (GEN1, GEN2): set_temperature waits for the ramp on the protocol clock."""

    def __init__(self, ctx, slot, model):
        super().__init__(ctx, slot, model)
        self._target = None

    def set_temperature(self, celsius):
        self._do("temp_set", {"celsius": float(celsius), "wait": True})
        self._target = float(celsius)

    def start_set_temperature(self, celsius):
        self._do("temp_set", {"celsius": float(celsius)})
        self._target = float(celsius)

    def await_temperature(self, celsius):
        pass

    def deactivate(self):
        self._do("temp_deactivate")
        self._target = None

    @property
    def temperature(self):
        return self._target if self._target is not None else 25.0

    @property
    def target(self):
        return self._target

    @property
    def status(self):
        return "holding at target" if self._target is not None else "idle"

    def __getattr__(self, name):
        _refuse("TemperatureModuleContext", name)


class MagneticModuleContext(_Module):
    """The Magnetic Module (GEN1, GEN2)."""

    def __init__(self, ctx, slot, model):
        super().__init__(ctx, slot, model)
        self._engaged = False

    def engage(self, height=None, offset=None, height_from_base=None):
        args = {}
        h = height_from_base if height_from_base is not None else height
        if h is None:
            lw = self.labware
            base = lw.magdeck_engage_height if lw is not None else None
            if base is None:
                raise CommandError("line %d: engage: give a height (the labware has no magnetic engage height)"
                                   % _caller_line(), _caller_line())
            h = base + (offset or 0)
        elif self._model == "magneticModuleV1" and height is not None and height_from_base is None:
            h = float(h) / 2  # GEN1 heights are in half-millimetres
        args["height"] = float(h)
        self._do("mag_engage", args)
        self._engaged = True

    def disengage(self):
        self._do("mag_disengage")
        self._engaged = False

    @property
    def status(self):
        return "engaged" if self._engaged else "disengaged"

    def __getattr__(self, name):
        _refuse("MagneticModuleContext", name)


class ThermocyclerContext(_Module):
    """The Thermocycler (GEN1, GEN2): ramps, holds and profiles take their time on the protocol clock."""

    def __init__(self, ctx, slot, model):
        super().__init__(ctx, slot, model)
        self._block, self._lid, self._lid_open = None, None, True

    def open_lid(self):
        self._do("tc_lid", {"mode": "open"})
        self._lid_open = True
        return "open"

    def close_lid(self):
        self._do("tc_lid", {"mode": "close"})
        self._lid_open = False
        return "closed"

    @property
    def lid_position(self):
        return "open" if self._lid_open else "closed"

    def set_lid_temperature(self, temperature):
        self._do("tc_set_lid", {"celsius": float(temperature)})
        self._lid = float(temperature)

    def set_block_temperature(self, temperature, hold_time_seconds=None, hold_time_minutes=None, ramp_rate=None,
                              block_max_volume=None):
        hold = float(hold_time_seconds or 0) + 60 * float(hold_time_minutes or 0)
        self._do("tc_set_block", {"celsius": float(temperature), "seconds": hold})
        self._block = float(temperature)

    def execute_profile(self, steps, repetitions, block_max_volume=None):
        prof = []
        for s in steps:
            hold = float(s.get("hold_time_seconds") or 0) + 60 * float(s.get("hold_time_minutes") or 0)
            prof.append({"celsius": float(s["temperature"]), "seconds": hold})
        self._do("tc_profile", {"profile": prof, "repetitions": int(repetitions)})
        if prof:
            self._block = prof[-1]["celsius"]

    def deactivate_lid(self):
        self._do("tc_deactivate", {"mode": "lid"})
        self._lid = None

    def deactivate_block(self):
        self._do("tc_deactivate", {"mode": "block"})
        self._block = None

    def deactivate(self):
        self._do("tc_deactivate")
        self._block = self._lid = None

    @property
    def block_temperature(self):
        return self._block if self._block is not None else 25.0

    @property
    def block_target_temperature(self):
        return self._block

    @property
    def lid_temperature(self):
        return self._lid if self._lid is not None else 25.0

    @property
    def lid_target_temperature(self):
        return self._lid

    @property
    def block_temperature_status(self):
        return "holding at target" if self._block is not None else "idle"

    @property
    def lid_temperature_status(self):
        return "holding at target" if self._lid is not None else "idle"

    def __getattr__(self, name):
        _refuse("ThermocyclerContext", name)


class HeaterShakerContext(_Module):
    """The Heater-Shaker Module GEN1 on the twin: temperatures and speeds are reached at once."""

    def __init__(self, ctx, slot, model="heaterShakerModuleV1"):
        super().__init__(ctx, slot, model)
        self._temperature = None
        self._rpm = 0
        self._latch = "idle_unknown"

    def _state(self, ev):
        self._temperature = ev["module"].get("temperature_c")
        return None

    def open_labware_latch(self):
        self._latch = "idle_open"
        return self._state(self._do("hs_open_latch"))

    def close_labware_latch(self):
        self._latch = "idle_closed"
        return self._state(self._do("hs_close_latch"))

    def set_and_wait_for_temperature(self, celsius):
        return self._state(self._do("hs_set_temperature", {"celsius": float(celsius)}))

    set_target_temperature = set_and_wait_for_temperature

    def wait_for_temperature(self):
        return None  # reached at once

    def set_and_wait_for_shake_speed(self, rpm):
        self._rpm = int(rpm)
        return self._state(self._do("hs_set_shake_speed", {"rpm": int(rpm)}))

    def deactivate_heater(self):
        return self._state(self._do("hs_deactivate_heater"))

    def deactivate_shaker(self):
        self._rpm = 0
        return self._state(self._do("hs_deactivate_shaker"))

    @property
    def current_temperature(self):
        return self._temperature

    @property
    def target_temperature(self):
        return self._temperature

    @property
    def current_speed(self):
        return self._rpm

    @property
    def target_speed(self):
        return self._rpm or None

    @property
    def labware_latch_status(self):
        return self._latch

    def __getattr__(self, name):
        _refuse("HeaterShakerContext", name)


class AbsorbanceReaderContext(_Module):
    """The Absorbance Plate Reader Module on the twin; read(labware) reads a plate where it sits."""

    def initialize(self, mode, wavelengths, reference_wavelength=None):
        if reference_wavelength is not None:
            _unsupported("initialize(reference_wavelength=...)")
        self._do("reader_initialize", {"mode": str(mode), "wavelengths": [float(w) for w in wavelengths]})

    def open_lid(self):
        pass  # the twin's reader has no lid to move

    def close_lid(self):
        pass

    def read(self, labware=None, export_filename=None):
        """{wavelength nm: {well: OD}} of every well of labware (default: the labware in the reader's slot)."""
        if export_filename is not None:
            _unsupported("read(export_filename=...)")
        labware = labware if labware is not None else self.labware
        if not isinstance(labware, Labware):
            raise TypeError("read: %r is not labware (no labware is in the reader's slot %d)" % (labware, self._slot))
        r = self._do("read_plate", {"well": labware._name})["reading"]
        out = {}
        for k, nm in enumerate(r["wavelengths_nm"]):
            key = int(nm) if float(nm).is_integer() else nm
            out[key] = {w["well"]: w["od"][k] for w in r["wells"]}
        return out

    def __getattr__(self, name):
        _refuse("AbsorbanceReaderContext", name)


_MODULES = {"heaterShakerModuleV1": HeaterShakerContext, "absorbanceReaderV1": AbsorbanceReaderContext,
            "temperatureModuleV1": TemperatureModuleContext, "temperatureModuleV2": TemperatureModuleContext,
            "magneticModuleV1": MagneticModuleContext, "magneticModuleV2": MagneticModuleContext,
            "thermocyclerModuleV1": ThermocyclerContext, "thermocyclerModuleV2": ThermocyclerContext}

ModuleContext = _Module


class Analysis:
    """labmate's analysis twin's chromatogram of one well: peaks (area by species), the method's
    response factors (area per mM) and the species it does not detect."""

    def __init__(self, chrom):
        self.well = chrom["well"]
        self.peaks = {p["species"]: p["area"] for p in chrom["peaks"]}
        self.response_factors = {p["species"]: p["response_factor"] for p in chrom["peaks"]}
        self.undetected = list(chrom.get("undetected") or ())

    def amount_mM(self, species):
        return self.peaks[species] / self.response_factors[species]

    def yield_vs_limiting(self, product, limiting):
        """Percent yield: the product's amount over the product's and the limiting reagent's."""
        p, l = self.amount_mM(product), self.amount_mM(limiting)
        return 100 * p / (p + l) if p + l else 0.0

    def __repr__(self):
        return "Analysis(%r, %r)" % (self.well, self.peaks)


_sessions = {}


def _session(path):
    """The ProtocolContext of the bench at path, one connection per kernel."""
    ctx = _sessions.get(path)
    if ctx is None:
        ctx = _sessions[path] = ProtocolContext(_Bench(path))
    return ctx


def _bench_path(workspace):
    return os.path.join(workspace, ".labmate", "bench.sock")


def _get_values(ctx, *names):
    """The protocol's parameters (a fields.json beside it, --param NAME=VALUE), as the Protocol
    Library's get_values gives them."""
    params = ctx._bench.do("params", {})["event"].get("params") or {}
    missing = [n for n in names if n not in params]
    if missing:
        raise KeyError("line %d: get_values: no value for %s (give a fields.json beside the protocol or --param NAME=VALUE)"
                       % (_caller_line(), ", ".join(repr(n) for n in missing)))
    return [params[n] for n in names]


from . import labware, contexts  # noqa: E402  (protocol_api.labware.OutOfTipsError, as in Opentrons)
