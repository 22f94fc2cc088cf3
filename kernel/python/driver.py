"""labmate's Python driver: runs framed cells in one persistent namespace.

Frames arrive on the original stdin: "R <tag> <path>\n" runs the cell in the file at path,
"B <tag>\n" only answers with tag's markers (start-up).
Every cell ends with <tag> alone on a line on stdout and stderr and an end record
"E\t<tag>\t<status>\t<line>\t<message>" on the side channel (fd 3). SIGINT raises
KeyboardInterrupt only while a cell runs; between cells it is ignored so framing never breaks.
"""
import builtins
import numbers
import os
import signal
import sys
import threading
import types

_side = os.fdopen(3, "w", buffering=1)
_frames = os.fdopen(os.dup(0), "r")
# Cells and their subprocesses must not read labmate's frames: give them /dev/null as stdin.
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.stdin = open(os.devnull)

_in_cell = False


def _on_sigint(signum, frame):
    if _in_cell:
        raise KeyboardInterrupt


signal.signal(signal.SIGINT, _on_sigint)


def _esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


_side_lock = threading.Lock()  # the cell and the loop looks (below) write records whole


def _fresh_lock():
    global _side_lock
    _side_lock = threading.Lock()  # a child forked while the looks held it would never get it


os.register_at_fork(after_in_child=_fresh_lock)


def log(name, value, t=None):
    """Record a telemetry sample: value is a number or a sequence/array of numbers,
    t an optional simulation time. Samples go to labmate's side channel, never to stdout."""
    if not isinstance(name, str) or not name:
        raise TypeError("labmate.log: name must be a non-empty string")
    flat = getattr(value, "ravel", None)
    if flat is not None:
        value = flat().tolist()
    vals = value if isinstance(value, (list, tuple)) else [value]
    if not vals:
        raise ValueError("labmate.log: value of %r is empty" % name)
    text = " ".join(repr(float(v)) for v in vals)
    ts = "" if t is None else repr(float(t))
    with _side_lock:
        _side.write("S\t%s\t%s\t%s\n" % ("_".join(name.split()), ts, text))


_MAGIC = b"labmate python snapshot 1\n"


def _report(verb, name, reason=""):
    line = "labmate-snapshot\t%s\t%s" % (verb, name)
    if reason:
        line += "\t" + " ".join(reason.split())
    print(line, file=sys.__stdout__)


def _why(exc):
    return "%s: %s" % (type(exc).__name__, exc)


def _save_state(path):
    """Write every global that pickle can serialise to path, each pickled on its own so that
    one that cannot be (a lambda, an open file, a generator) is reported and skipped; modules
    are recorded by name and imported again on load. Record: kind (b"v" value, b"m" module),
    the name, then for a value the pickle (protocol 5) and its out-of-band buffers (numpy
    arrays, without a copy), for a module its name; b"e" ends the file."""
    import pickle
    import struct

    def blob(f, b):
        f.write(struct.pack("<Q", len(b)))
        f.write(b)

    with open(path, "wb") as f:
        f.write(_MAGIC)
        for name, value in list(ns.items()):
            if name.startswith("__") and name.endswith("__") or value is labmate or value is _get_values:
                continue
            if isinstance(value, types.ModuleType):
                if sys.modules.get(value.__name__) is not value:
                    _report("skipped", name, "module %s cannot be imported by its name" % value.__name__)
                    continue
                f.write(b"m")
                blob(f, name.encode())
                blob(f, value.__name__.encode())
                _report("saved", name)
                continue
            bufs = []

            def out_of_band(b):
                try:
                    bufs.append(b.raw())
                    return False
                except BufferError:  # not contiguous: in the pickle itself
                    return True

            try:
                data = pickle.dumps(value, protocol=5, buffer_callback=out_of_band)
            except Exception as exc:
                _report("skipped", name, _why(exc))
                continue
            f.write(b"v")
            blob(f, name.encode())
            blob(f, data)
            f.write(struct.pack("<I", len(bufs)))
            for b in bufs:
                blob(f, b)
            _report("saved", name)
        f.write(b"e")


def _load_state(path):
    """Load a file _save_state wrote into the namespace. A malformed file changes nothing; a
    value that cannot be unpickled (its class is gone) is reported and skipped."""
    import importlib
    import mmap
    import pickle
    import struct

    with open(path, "rb") as f:
        if f.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("%s is not a labmate Python snapshot" % path)

        def exact(n):
            # Large buffers in anonymous memory: zero pages the read fills, unlike a
            # bytearray's memset (≈40 % of the time for a 100 MiB array). Both are writable.
            b = mmap.mmap(-1, n) if n >= 1 << 20 else bytearray(n)
            view, got = memoryview(b), 0
            while got < n:
                k = f.readinto(view[got:])
                if not k:
                    raise ValueError("the snapshot %s ends in the middle of a record" % path)
                got += k
            return b

        def blob():
            return exact(struct.unpack("<Q", exact(8))[0])

        records = []
        while True:
            kind = bytes(exact(1))
            if kind == b"e":
                break
            if kind not in (b"v", b"m"):
                raise ValueError("the snapshot %s is corrupt (record kind %r)" % (path, kind))
            name = blob().decode()
            if kind == b"m":
                records.append((name, kind, blob().decode(), None))
                continue
            data = blob()
            bufs = [blob() for _ in range(struct.unpack("<I", exact(4))[0])]
            records.append((name, kind, data, bufs))
    for name, kind, data, bufs in records:
        try:
            if kind == b"m":
                ns[name] = importlib.import_module(data)
            else:
                ns[name] = pickle.loads(data, buffers=bufs)
        except Exception as exc:
            _report("skipped", name, _why(exc))
            continue
        _report("restored", name)


_workspace = os.getcwd()


def bench():
    """The session's bench as an Opentrons ProtocolContext: its commands are carried out by
    labmate's liquid-handler twin, and its state persists across cells."""
    from opentrons import protocol_api

    return protocol_api._session(protocol_api._bench_path(_workspace))


def _run_protocol():
    """Run the Opentrons protocol the cell defined (metadata or requirements with apiLevel
    2.x, and run(protocol)) on the session's bench."""
    level = ""
    for meta in (ns.get("requirements"), ns.get("metadata")):  # apiLevel may be in either
        if isinstance(meta, dict) and meta.get("apiLevel") is not None:
            level = str(meta["apiLevel"])
            break
    if not level.startswith("2."):
        raise ValueError("an Opentrons protocol declares metadata = {'apiLevel': '2.x'} (found %r)" % (level or None))
    run = ns.get("run")
    if not callable(run):
        raise ValueError("an Opentrons protocol defines run(protocol)")
    ctx = bench()
    ctx._set_level(level)
    add = ns.get("add_parameters")
    if callable(add):  # runtime parameters, declared before run as the Opentrons API does
        ctx._add_parameters(add)
    run(ctx)


# The statement lab/benchrun ends a protocol's cell with.
_PROTOCOL_RUN = "__import__('labmate')._run_protocol()"


def _get_values(*names):
    """The Protocol Library's get_values: the protocol's parameters from the bench (a
    fields.json beside the protocol, or --param NAME=VALUE)."""
    from opentrons import protocol_api

    return protocol_api._get_values(bench(), *names)


labmate = types.ModuleType("labmate", "labmate's helpers inside a kernel.")
labmate.log = log
labmate.bench = bench
labmate._run_protocol = _run_protocol
labmate._save_state = _save_state
labmate._load_state = _load_state
sys.modules["labmate"] = labmate
ns = {"__name__": "__main__", "__builtins__": builtins, "labmate": labmate, "get_values": _get_values}


def _mark(tag, status, line, msg):
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
            stream.write("\n%s\n" % tag)
            stream.flush()
        except Exception:
            pass
    with _side_lock:
        _side.write("E\t%s\t%s\t%d\t%s\n" % (tag, status, line, _esc(msg)))


def _warm_up():
    # ast, traceback and linecache cost ≈15 ms to import: load them while the kernel waits
    # for its first cell instead of before it answers "ready".
    global ast, linecache, traceback
    import ast
    import linecache
    import traceback


_warming = threading.Thread(target=_warm_up, daemon=True)


def _error_line(exc, path):
    if isinstance(exc, SyntaxError) and exc.filename == path:
        return exc.lineno or 0
    line = 0
    for fs in traceback.extract_tb(exc.__traceback__):
        if fs.filename == path:
            line = fs.lineno
    return line


# Loop sampling. A cell silent in a while loop may be converging slowly or spinning without
# ever meeting its exit; from outside the two look alike. While a cell runs, a thread looks at
# its frame every _LOOK_EVERY seconds and, when it is inside a while loop of the cell, reports
# each exit's distance: left - right of every comparison in the loop's condition or in an
# `if ...: break/return` of its body. Only expressions that read values are evaluated (names,
# attributes, subscripts, arithmetic, abs/min/max/norm...): nothing the cell's code calls.
# Comparisons of two integers (a counter and its cap) and of wall-clock times (a guard) are
# left out. Record: "L\t<loop line>\t<comparison line>:<distance> ...".
_LOOK_EVERY = 0.5  # labmate samples resources every 0.5 s and sends the latest look with each
_PURE_CALLS = {"abs", "min", "max", "float", "len", "fabs", "norm", "sqrt", "hypot", "amax", "amin", "real", "imag", "absolute"}
_CLOCK_WORDS = {"time", "elapsed", "deadline", "timeout", "clock", "wall", "walltime", "tic", "toc", "now", "timer"}


def _clock(name):
    import re

    return any(w in _CLOCK_WORDS for w in re.split(r"[_\d]+", name.lower()))


def _pure(node):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name not in _PURE_CALLS or n.keywords:
                return False
        elif isinstance(n, ast.Name) and _clock(n.id) or isinstance(n, ast.Attribute) and _clock(n.attr):
            return False
        elif not isinstance(n, (ast.expr, ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)) or \
                isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.ListComp,
                               ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return False
    return True


def _comparisons(test, out):
    if isinstance(test, ast.BoolOp):
        for v in test.values:
            _comparisons(v, out)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        _comparisons(test.operand, out)
    elif isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)):
        left, right = test.left, test.comparators[0]
        if _pure(left) and _pure(right):
            pair = ast.Tuple([left, right], ast.Load())
            code = compile(ast.fix_missing_locations(ast.copy_location(ast.Expression(pair), pair)), "<labmate loop>", "eval")
            out.append((test.lineno, code))


def _exits(body, out):
    """The comparisons of `if ...: break/return` in a loop body (not in nested loops)."""
    for st in body:
        if isinstance(st, ast.If):
            if any(isinstance(b, (ast.Break, ast.Return)) for b in st.body):
                _comparisons(st.test, out)
            _exits(st.body, out)
            _exits(st.orelse, out)
        elif isinstance(st, (ast.With, ast.Try)):
            _exits(st.body, out)


def _loops(tree):
    loops = []
    for node in ast.walk(tree):
        if isinstance(node, ast.While):
            ex = []
            _comparisons(node.test, ex)
            _exits(node.body, ex)
            if ex:
                loops.append((node.lineno, node.end_lineno, ex))
    loops.sort(key=lambda l: l[1] - l[0])  # innermost (shortest) first
    return loops


def _distance(pair):
    a, b = pair
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return None  # a counter and its cap
    d = float(a) - float(b)
    return d if d == d and d not in (float("inf"), float("-inf")) else None


def _look(path, loops, main, done):
    """Report the exits of every loop of the cell the main thread is in, innermost first
    (an open search whose every step runs a counted inner loop is judged by its own exits)."""
    while not done.wait(_LOOK_EVERY):
        frame = sys._current_frames().get(main)
        first, parts = 0, []
        while frame is not None:
            if frame.f_code.co_filename == path:
                at = frame.f_lineno
                for start, end, exits in loops:
                    if not start <= at <= end:
                        continue
                    for line, code in exits:
                        try:
                            d = _distance(eval(code, frame.f_globals, frame.f_locals))
                        except Exception:
                            continue
                        if d is not None:
                            first = first or start
                            parts.append("%d:%r" % (line, d))
            frame = frame.f_back
        if parts:
            with _side_lock:
                _side.write("L\t%d\t%s\n" % (first, " ".join(parts)))


def _run(path):
    """Run the cell; return (status, line, message)."""
    global _in_cell
    _warming.join()
    with open(path, encoding="utf-8") as f:
        src = f.read()
    # Tracebacks name the cell "<cell N>"; linecache keeps its source (mtime None: never stale).
    path = "<cell %s>" % os.path.basename(path).split("_")[-1].split(".")[0]
    linecache.cache[path] = (len(src), None, src.splitlines(True), path)
    # Warnings are shown once per location and the registry lives in the shared namespace:
    # forget it, so that a warning the previous cell showed is seen (and judged) again.
    ns.pop("__warningregistry__", None)
    done = threading.Event()
    try:
        _in_cell = True
        try:
            tree = ast.parse(src, path)
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            try:
                loops = _loops(tree)
            except Exception:  # looking is an aid: never the cell's failure
                loops = None
            if loops:
                looking = threading.Thread(target=_look, args=(path, loops, threading.get_ident(), done), daemon=True)
                looking.start()
            if last is not None and ast.dump(last.body) == ast.dump(ast.parse(_PROTOCOL_RUN, mode="eval").body):
                # An Opentrons protocol is not the main program on the robot, which runs it
                # in globals of its own: its `if __name__ == "__main__":` block never runs.
                ns["__name__"] = "builtins"
            exec(compile(tree, path, "exec"), ns)
            if last is not None:
                value = eval(compile(last, path, "eval"), ns)
                if value is not None:
                    ns["_"] = value
                    print(repr(value))
        finally:
            _in_cell = False
            ns["__name__"] = "__main__"
            done.set()
    except KeyboardInterrupt:
        print("KeyboardInterrupt", file=sys.__stderr__)
        return "interrupted", 0, "KeyboardInterrupt"
    except BaseException as exc:  # SystemExit too: a cell must not end the kernel
        tb = exc.__traceback__
        if isinstance(exc, SyntaxError):
            tb = None  # the frames are the parser's, not the cell's
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb, file=sys.__stderr__)
        msg = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return "error", _error_line(exc, path), msg
    return "ok", 0, ""


def main():
    sys.path[0] = ""  # import from the workspace, like an interactive session
    # Options.Library's python/ (e.g. the bench's opentrons package) before site-packages.
    sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
    for frame in _frames:
        parts = frame.rstrip("\n").split(" ", 2)
        if len(parts) == 2 and parts[0] == "B":
            _mark(parts[1], "ready", 0, "")
            if _warming.ident is None:
                _warming.start()
            continue
        if len(parts) != 3 or parts[0] != "R":
            print("labmate driver: bad frame %r" % frame, file=sys.__stderr__)
            continue
        _, tag, path = parts
        try:
            status, line, msg = _run(path)
        except KeyboardInterrupt:  # raced with the end of the cell
            status, line, msg = "interrupted", 0, "KeyboardInterrupt"
        except BaseException as exc:
            status, line, msg = "error", 0, "labmate driver: %s" % exc
        _mark(tag, status, line, msg)


main()
