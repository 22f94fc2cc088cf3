"""The Opentrons Protocol API v2 subset labmate's bench twin carries out.

Supported: ProtocolContext.load_labware, load_instrument, load_module, define_liquid, comment,
delay, home (nothing to do), loaded_labwares and loaded_modules (also what the bench held before
the protocol: a deck set up for it); Labware wells(), wells_by_name(), rows(), rows_by_name(),
columns(), columns_by_name(), labware["A1"]; Well top(), bottom(), center() (the twin has no
heights: a location is its well), load_liquid; InstrumentContext pick_up_tip, drop_tip,
return_tip, aspirate, dispense, mix, blow_out, transfer, distribute, consolidate.

Modules: load_module("heaterShakerModuleV1", slot) is a HeaterShakerContext (load_labware,
open_labware_latch, close_labware_latch, set_and_wait_for_temperature, set_target_temperature,
set_and_wait_for_shake_speed, deactivate_heater, deactivate_shaker, current_temperature);
temperatures are reached at once. delay(seconds, minutes) is time passing on the twin, not waited:
every heater-shaker holds its plate that long and the reactions its wells map to run once held
at their temperature long enough in all (delays add up until the temperature changes).
load_module("absorbanceReaderV1", slot) is an AbsorbanceReaderContext: initialize(mode,
wavelengths), open_lid/close_lid (nothing to do), read(labware) returning {nm: {well: OD}}. The
Flex reads the plate on the module, moved there by the gripper; the twin reads the labware given
(default: the one in the reader's slot) where it sits.

labmate's extension, not Opentrons: protocol.analyze(well) injects a sample into the bench's
analysis twin (an HPLC with a calibrated method) and returns an Analysis: the peak areas by
species, their response factors, amount_mM(species) and yield_vs_limiting(product, limiting).

Anything else (air_gap, touch_tip, move_labware, flow rates, a keyword the twin does not model) raises
UnsupportedError naming it. Each command is sent to the twin with the protocol line that called
it; a refused one raises CommandError with the twin's message. After each command the volume of
every well it touched is logged as telemetry vol_<labware>_<well> (µL), and tips picked up as
tips_used, a heater-shaker's temperature as hs<slot>_temp_c, each read's absorbance of the wells
holding liquid as od_<labware>_<well>_<nm>, and each analysis's peaks as
area_<labware>_<well>_<n> (n: the peak's index in species order), so perception and --watch can
follow them.
"""
import json
import os
import socket
import sys

import labmate

__all__ = ["ProtocolContext", "InstrumentContext", "Labware", "Well", "Location", "Liquid",
           "HeaterShakerContext", "AbsorbanceReaderContext", "Analysis", "CommandError", "UnsupportedError"]


class UnsupportedError(Exception):
    """A name of the Opentrons API that labmate's bench twin does not model."""


class _UnsupportedAttribute(UnsupportedError, AttributeError):
    pass


class CommandError(Exception):
    """A command the bench refused; line is the protocol line that sent it."""

    def __init__(self, message, line):
        super().__init__(message)
        self.line = line


def _refuse(owner, name, supported):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _UnsupportedAttribute("%s.%s is not supported by labmate's bench twin (supported: %s)"
                                % (owner, name, ", ".join(supported)))


def _keywords(method, kw, defaults):
    """Refuse keywords the twin does not model, unless given at the value that changes nothing."""
    for k, v in kw.items():
        if k not in defaults or v != defaults[k]:
            raise UnsupportedError("%s(%s=%r) is not supported by labmate's bench twin" % (method, k, v))


def _caller_line():
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename == __file__:
        f = f.f_back
    return f.f_lineno if f is not None else 0


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

    def do(self, name, args):
        line = _caller_line()
        self.sock.sendall(json.dumps({"name": name, "args": args, "line": line}).encode() + b"\n")
        raw = self.replies.readline()
        if not raw:
            raise ConnectionError("labmate: the bench closed the connection")
        rep = json.loads(raw)
        err = rep.get("error")
        if err:
            raise CommandError(err["message"], line)
        ev = rep["event"]
        for ref, v in (ev.get("volumes_ul") or {}).items():
            labmate.log("vol_" + ref.replace("/", "_"), v)
        picked = sum(1 for s in ev.get("steps") or () if s["action"] == "pick_up_tip")
        if picked:
            self.tips += picked
            labmate.log("tips_used", self.tips)
        mod = ev.get("module")
        if mod and mod["model"] == "heaterShakerModuleV1":
            labmate.log("hs%d_temp_c" % mod["slot"], mod.get("temperature_c", 0))
        reading = ev.get("reading")
        if reading:
            for w in reading["wells"]:
                if w.get("path_cm"):
                    for nm, od in zip(reading["wavelengths_nm"], w["od"]):
                        labmate.log("od_%s_%s_%g" % (reading["labware"], w["well"], nm), od)
        chrom = ev.get("chromatogram")
        if chrom:
            for i, p in enumerate(chrom["peaks"]):
                labmate.log("area_%s_%d" % (chrom["well"].replace("/", "_"), i), p["area"])
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


class Location:
    """A place in a well; the twin has no heights, so every place in a well is the well."""

    def __init__(self, well):
        self.labware = well

    def __repr__(self):
        return "Location(%r)" % self.labware


class Well:
    def __init__(self, labware, name):
        self.parent, self.well_name = labware, name
        self._ref = labware._name + "/" + name

    @property
    def display_name(self):
        return "%s of %s on %s" % (self.well_name, self.parent._display, self.parent._slot)

    def top(self, z=0.0):
        return Location(self)

    def bottom(self, z=0.0):
        return Location(self)

    def center(self):
        return Location(self)

    def load_liquid(self, liquid, volume):
        if not isinstance(liquid, Liquid):
            raise TypeError("load_liquid: %r is not a Liquid from protocol.define_liquid" % (liquid,))
        self.parent._ctx._bench.do("load_liquid", {"well": self._ref, "volume": float(volume),
                                                   "concentrations": liquid.concentrations})

    def __repr__(self):
        return self.display_name

    def __getattr__(self, name):
        _refuse("Well", name, ["well_name", "display_name", "parent", "top", "bottom", "center", "load_liquid"])


class Labware:
    def __init__(self, ctx, rep, slot):
        self._ctx, self._name, self._slot = ctx, rep["name"], str(slot)
        self._display = rep["display_name"]
        self.load_name = self.name = rep["load_name"]
        self.is_tiprack = rep["is_tiprack"]
        self._columns = [[Well(self, n) for n in col] for col in rep["ordering"]]
        self._wells = [w for col in self._columns for w in col]
        self._by_name = {w.well_name: w for w in self._wells}
        depth = max(len(col) for col in self._columns)
        self._rows = [[col[r] for col in self._columns if r < len(col)] for r in range(depth)]

    @property
    def parent(self):
        return self._slot

    def wells(self, *names):
        return [self[n] for n in names] if names else list(self._wells)

    def wells_by_name(self):
        return dict(self._by_name)

    def rows(self, *index):
        return [self._rows[i] for i in index] if index else [list(r) for r in self._rows]

    def rows_by_name(self):
        return {r[0].well_name.rstrip("0123456789"): list(r) for r in self._rows}

    def columns(self, *index):
        return [self._columns[i] for i in index] if index else [list(c) for c in self._columns]

    def columns_by_name(self):
        return {str(i + 1): list(c) for i, c in enumerate(self._columns)}

    def __getitem__(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError("%s has no well %r" % (self, name)) from None

    def __repr__(self):
        return "%s on %s" % (self._display, self._slot)

    def __getattr__(self, name):
        _refuse("Labware", name, ["wells", "wells_by_name", "rows", "rows_by_name", "columns", "columns_by_name",
                                  "labware[well]", "load_name", "is_tiprack", "parent"])


def _well(loc, what):
    if isinstance(loc, Location):
        loc = loc.labware
    if not isinstance(loc, Well):
        raise TypeError("%s: %r is not a well (labware['A1']) or a place in one (well.top())" % (what, loc))
    return loc


def _wells(arg, what):
    if isinstance(arg, (list, tuple)):
        out = []
        for a in arg:
            out.extend(_wells(a, what))
        return out
    return [_well(arg, what)._ref]


_LIQUID_DEFAULTS = {"rate": 1.0}
_PLAN_DEFAULTS = {"trash": True, "touch_tip": False, "blow_out": False, "air_gap": 0, "mix_before": None,
                  "mix_after": None, "disposal_volume": None, "carryover": True, "gradient": None}
_SUPPORTED_INSTRUMENT = ["pick_up_tip", "drop_tip", "return_tip", "aspirate", "dispense", "mix", "blow_out",
                         "transfer", "distribute", "consolidate", "mount", "name"]


class InstrumentContext:
    def __init__(self, ctx, name, mount):
        self._ctx, self.name, self.mount = ctx, name, mount
        self._where = None  # the well the pipette is at, for a command without a location

    def _do(self, name, args):
        args["mount"] = self.mount
        self._ctx._bench.do(name, args)
        return self

    def _at(self, location, what):
        if location is None:
            if self._where is None:
                raise TypeError("%s: no location given and the pipette has not been at a well yet" % what)
            return self._where
        self._where = _well(location, what)
        return self._where

    def pick_up_tip(self, location=None, **kw):
        _keywords("pick_up_tip", kw, {"presses": None, "increment": None, "prep_after": None})
        args = {} if location is None else {"well": _well(location, "pick_up_tip")._ref}
        return self._do("pick_up_tip", args)

    def drop_tip(self, location=None, home_after=None):
        if location is not None:
            raise UnsupportedError("drop_tip(location) is not supported by labmate's bench twin: tips go to the "
                                   "trash (return_tip() puts one back in its rack)")
        return self._do("drop_tip", {})

    def return_tip(self, home_after=None):
        return self._do("return_tip", {})

    def aspirate(self, volume=None, location=None, **kw):
        _keywords("aspirate", kw, _LIQUID_DEFAULTS)
        well = self._at(location, "aspirate")
        return self._do("aspirate", {"volume": float(volume or 0), "well": well._ref})

    def dispense(self, volume=None, location=None, **kw):
        _keywords("dispense", kw, dict(_LIQUID_DEFAULTS, push_out=None))
        well = self._at(location, "dispense")
        return self._do("dispense", {"volume": float(volume or 0), "well": well._ref})

    def mix(self, repetitions=1, volume=None, location=None, **kw):
        _keywords("mix", kw, _LIQUID_DEFAULTS)
        well = self._at(location, "mix")
        return self._do("mix", {"repetitions": int(repetitions), "volume": float(volume or 0), "well": well._ref})

    def blow_out(self, location=None):
        args = {}
        if location is not None or self._where is not None:
            args["well"] = self._at(location, "blow_out")._ref
        return self._do("blow_out", args)

    def _plan(self, name, volume, source, dest, new_tip, kw):
        _keywords(name, kw, _PLAN_DEFAULTS)
        args = {"source": _wells(source, name), "dest": _wells(dest, name), "new_tip": new_tip}
        if isinstance(volume, (list, tuple)):
            args["volumes"] = [float(v) for v in volume]
        else:
            args["volume"] = float(volume)
        return self._do(name, args)

    def transfer(self, volume, source, dest, new_tip="once", **kw):
        return self._plan("transfer", volume, source, dest, new_tip, kw)

    def distribute(self, volume, source, dest, new_tip="once", **kw):
        return self._plan("distribute", volume, source, dest, new_tip, kw)

    def consolidate(self, volume, source, dest, new_tip="once", **kw):
        return self._plan("consolidate", volume, source, dest, new_tip, kw)

    def __repr__(self):
        return "%s on %s mount" % (self.name, self.mount)

    def __getattr__(self, name):
        _refuse("InstrumentContext", name, _SUPPORTED_INSTRUMENT)


class ProtocolContext:
    """The bench as the Opentrons API's protocol object."""

    def __init__(self, bench):
        self._bench = bench
        self._labware, self._modules = {}, {}  # by slot number
        self._synced = False

    def _sync(self):
        """Learn once what the bench held before: a deck set up for the protocol."""
        if self._synced:
            return
        ev = self._bench.do("deck", {})["event"]
        for rep in ev.get("labware") or ():
            self._labware.setdefault(rep["slot"], Labware(self, rep, rep["slot"]))
        for m in ev.get("modules") or ():
            self._modules.setdefault(m["slot"], _MODULES[m["model"]](self, m["slot"]))
        self._synced = True

    @property
    def loaded_labwares(self):
        """The labware on the deck by slot number, what the bench held before the protocol included."""
        self._sync()
        return dict(self._labware)

    @property
    def loaded_modules(self):
        """The modules on the deck by slot number."""
        self._sync()
        return dict(self._modules)

    def load_module(self, module_name, location=None, configuration=None):
        if configuration is not None:
            raise UnsupportedError("load_module(configuration=%r) is not supported by labmate's bench twin" % (configuration,))
        if module_name not in _MODULES:
            raise UnsupportedError("ProtocolContext.load_module is not supported by labmate's bench twin for %r "
                                   "(supported modules: %s)" % (module_name, ", ".join(_MODULES)))
        slot = int(str(location))
        self._bench.do("load_module", {"module": module_name, "slot": str(slot)})
        self._modules[slot] = m = _MODULES[module_name](self, slot)
        return m

    def analyze(self, well):
        """labmate's extension, not Opentrons: inject a sample of well into the analysis twin."""
        return Analysis(self._bench.do("analyze", {"well": _well(well, "analyze")._ref})["event"]["chromatogram"])

    def load_labware(self, load_name, location, label=None, namespace=None, version=None):
        _keywords("load_labware", {k: v for k, v in (("namespace", namespace), ("version", version)) if v is not None},
                  {"namespace": "opentrons", "version": 1})
        slot = str(location)
        args = {"load_name": load_name, "slot": slot}
        if label is not None and str(label).isidentifier():  # the twin's name for it; otherwise its slot
            args["label"] = str(label)
        lw = Labware(self, self._bench.do("load_labware", args)["labware"], slot)
        if slot.isdigit():
            self._labware[int(slot)] = lw
        return lw

    def load_instrument(self, instrument_name, mount, tip_racks=None, replace=False):
        if replace:
            raise UnsupportedError("load_instrument(replace=True) is not supported by labmate's bench twin")
        racks = [r._name for r in tip_racks or ()]
        self._bench.do("load_instrument", {"instrument": instrument_name, "mount": str(mount), "tip_racks": racks})
        return InstrumentContext(self, instrument_name, str(mount))

    def define_liquid(self, name, description=None, display_color=None, concentrations=None):
        """A liquid: by default its name is one species at 1 mol/L; concentrations (species →
        mol/L, {} for a pure solvent) say what it is made of."""
        return Liquid(name, description, display_color, {name: 1.0} if concentrations is None else dict(concentrations))

    def comment(self, msg):
        print(msg)

    def delay(self, seconds=0, minutes=0, msg=None):
        """Time passing on the twin (not waited): heater-shakers hold their plates that long."""
        total = float(seconds) / 60 + float(minutes)
        print("delay %g min (the twin does not wait)%s" % (total, ": " + msg if msg else ""))
        if total > 0:
            self._bench.do("delay", {"minutes": total})

    def home(self):
        pass  # the twin's pipettes have no position to lose

    def __reduce__(self):
        raise TypeError("a bench connection is not saved: labmate.bench() gives it back")

    def __getattr__(self, name):
        _refuse("ProtocolContext", name, ["load_labware", "load_instrument", "load_module", "define_liquid", "comment",
                                          "delay", "home", "loaded_labwares", "loaded_modules", "analyze"])


class _Module:
    def __init__(self, ctx, slot):
        self._ctx, self._slot = ctx, int(slot)

    def _do(self, name, args=None):
        return self._ctx._bench.do(name, dict(args or {}, slot=str(self._slot)))["event"]

    @property
    def labware(self):
        return self._ctx.loaded_labwares.get(self._slot)

    def load_labware(self, name, label=None, namespace=None, version=None, adapter=None):
        if adapter is not None:
            raise UnsupportedError("load_labware(adapter=%r) is not supported by labmate's bench twin" % (adapter,))
        return self._ctx.load_labware(name, self._slot, label, namespace, version)

    def __repr__(self):
        return "%s in slot %d" % (type(self).__name__, self._slot)


class HeaterShakerContext(_Module):
    """The Heater-Shaker Module GEN1 on the twin: temperatures and speeds are reached at once."""

    def __init__(self, ctx, slot):
        super().__init__(ctx, slot)
        self._temperature = None

    def _state(self, ev):
        self._temperature = ev["module"].get("temperature_c")
        return None

    def open_labware_latch(self):
        return self._state(self._do("hs_open_latch"))

    def close_labware_latch(self):
        return self._state(self._do("hs_close_latch"))

    def set_and_wait_for_temperature(self, celsius):
        return self._state(self._do("hs_set_temperature", {"celsius": float(celsius)}))

    set_target_temperature = set_and_wait_for_temperature

    def wait_for_temperature(self):
        return None  # reached at once

    def set_and_wait_for_shake_speed(self, rpm):
        return self._state(self._do("hs_set_shake_speed", {"rpm": int(rpm)}))

    def deactivate_heater(self):
        return self._state(self._do("hs_deactivate_heater"))

    def deactivate_shaker(self):
        return self._state(self._do("hs_deactivate_shaker"))

    @property
    def current_temperature(self):
        return self._temperature

    def __getattr__(self, name):
        _refuse("HeaterShakerContext", name, ["load_labware", "open_labware_latch", "close_labware_latch",
                                              "set_and_wait_for_temperature", "set_target_temperature",
                                              "wait_for_temperature", "set_and_wait_for_shake_speed",
                                              "deactivate_heater", "deactivate_shaker", "current_temperature",
                                              "labware"])


class AbsorbanceReaderContext(_Module):
    """The Absorbance Plate Reader Module on the twin; read(labware) reads a plate where it sits."""

    def initialize(self, mode, wavelengths, reference_wavelength=None):
        if reference_wavelength is not None:
            raise UnsupportedError("initialize(reference_wavelength=...) is not supported by labmate's bench twin")
        self._do("reader_initialize", {"mode": str(mode), "wavelengths": [float(w) for w in wavelengths]})

    def open_lid(self):
        pass  # the twin's reader has no lid to move

    def close_lid(self):
        pass

    def read(self, labware=None, export_filename=None):
        """{wavelength nm: {well: OD}} of every well of labware (default: the labware in the reader's slot)."""
        if export_filename is not None:
            raise UnsupportedError("read(export_filename=...) is not supported by labmate's bench twin")
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
        _refuse("AbsorbanceReaderContext", name, ["initialize", "read", "open_lid", "close_lid", "load_labware",
                                                  "labware"])


_MODULES = {"heaterShakerModuleV1": HeaterShakerContext, "absorbanceReaderV1": AbsorbanceReaderContext}


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
