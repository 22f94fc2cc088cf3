// Package client is the lab bench's client code that runs inside kernels, handed to them as
// kernel.Options.Library (Library), so that a cell drives the bench (lab/bench) without the
// kernels knowing of it.
//
// python/ is the Opentrons Protocol API v2 on labmate's bench (package opentrons, see
// opentrons/protocol_api/__init__.py): labmate.bench() in a Python cell is the session's
// ProtocolContext, talking to the bench on WORKSPACE/.labmate/bench.sock.
//
// octave/ drives the same bench with Opentrons-style functions (load_labware,
// load_instrument, define_liquid, load_liquid, pick_up_tip, aspirate, dispense, mix, blow_out,
// drop_tip, return_tip, transfer, distribute, consolidate, wells, delay, comment,
// bench_command), its modules with functions named as the Python module's methods, the module
// first (load_module; heater-shaker: set_and_wait_for_temperature,
// set_and_wait_for_shake_speed, deactivate_heater, deactivate_shaker, open_labware_latch,
// close_labware_latch, current_temperature; plate reader: initialize, read; analysis: analyze,
// amount_mM, yield_vs_limiting), at the end of the load path; Opentrons names the twin does
// not model (air_gap, touch_tip, move_labware, …) are errors that say so. A protocol file for
// labmate lab simulate is a script of these functions. Octave has no sockets, so they talk to
// the bench through the named pipes WORKSPACE/.labmate/bench.in and bench.out
// (bench.ServeFIFO), with the same commands, replies and telemetry as the Python module's
// socket.
package client

import (
	"embed"
	"io/fs"
)

//go:embed all:octave all:python
var files embed.FS

// Library is the bench's client code for every kernel that has one (octave/, python/): pass it
// as kernel.Options.Library.
var Library fs.FS = files
