package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/lab/benchrun"
)

func newLabCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "lab",
		Short: "Simulate and run Opentrons-style protocols on the liquid-handler bench twin",
		Long: `A protocol is a Python file written for the Opentrons Protocol API v2 (metadata =
{"apiLevel": "2.x"} and def run(protocol):, OT-2 API levels 2.0–2.15). It runs unmodified in a
sandboxed Python kernel on the bench twin: Opentrons' standard labware by name and version,
custom labware from a labware/ folder beside the protocol, --labware DIR or
load_labware_from_definition, GEN1 and GEN2 single- and 8-channel pipettes, the temperature,
magnetic, thermocycler, heater-shaker and plate-reader modules, get_values from a fields.json
beside the protocol or --param NAME=VALUE. A name of the API the twin does not model is an
error naming it and the protocol line. Liquid the protocol never declares (define_liquid,
load_liquid) is taken as loaded by hand, tracked and reported. Every command is carried out
by the twin with its protocol line, and the volume of each well it touched is telemetry
vol_LABWARE_WELL (tips picked up: tips_used) that --watch constraints can bound.

An Octave protocol (a .m file) is a script of the same commands as Octave functions, the
pipette or module first, run as it stands (its lines are Octave's): plate = load_labware
("corning_96_wellplate_360ul_flat", 1, "plate"); p = load_instrument ("p300_single_gen2",
"left", tips); load_liquid (res.wells.A1, 10000, "tartrazine"); transfer (p, 100,
res.wells.A1, plate.rows{1}); modules: hs = load_module ("heaterShakerModuleV1", 4),
set_and_wait_for_temperature (hs, 90), delay (0, 60), r = read (reader, plate), a = analyze
(well). It may be written as Opentrons' def run(protocol): a function run (protocol), which
is then called with protocol.load_labware, protocol.load_instrument, protocol.load_module, …
as fields. Opentrons names the Octave functions do not model (air_gap, touch_tip, …) are
refused by name.

In a session, protocol = labmate.bench() is the same bench as a ProtocolContext, and the
Octave functions work on it too.`,
	}
	cmd.AddCommand(newLabSimulateCmd(), newLabRunCmd(), newLabShowCmd())
	return cmd
}

func newLabSimulateCmd() *cobra.Command {
	var pf protocolFlags
	cmd := &cobra.Command{
		Use:   "simulate PROTOCOL.py|PROTOCOL.m|-",
		Short: "Run a protocol on a fresh twin: its commands, the final plate maps and every error with its line",
		Long: `Run a protocol on a fresh twin in a sandboxed Python (.py) or Octave (.m) kernel (- reads
it from stdin, Python unless --kernel octave) and print the numbered command list (line:
command → what moved), the final plate maps and every warning and error with its protocol
line. Nothing persists. Exit status: 0 when the protocol ran, 1 when it failed (the line is
printed), 2 when it could not be run at all.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return pf.run(cmd, args[0], "")
		},
	}
	pf.add(cmd)
	return cmd
}

func newLabRunCmd() *cobra.Command {
	var (
		pf        protocolFlags
		workspace string
	)
	cmd := &cobra.Command{
		Use:   "run PROTOCOL.py|PROTOCOL.m|-",
		Short: "Run a protocol on the workspace's bench, which keeps its state for the next run",
		Long: `Run a protocol as lab simulate does, on the bench of --workspace (default: the current
directory): it starts from what earlier runs left (WORKSPACE/.labmate/bench.jsonl, the journal
of the commands done, which the sandboxed code cannot write) and adds this run's commands.
--approve ask asks before each command on a backend that moves a real instrument; the twin
moves nothing and is never asked about. The run is an operation of a new session in the data
directory's log (DATA/labmate.db), which labmate serve lists and its dashboard shows live.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := workspaceDir(workspace)
			if err != nil {
				return err
			}
			return pf.run(cmd, args[0], ws)
		},
	}
	pf.add(cmd)
	cmd.Flags().StringVar(&workspace, "workspace", "", "the workspace whose bench to use (default: the current directory)")
	cmd.Flags().StringVar(&pf.data, "data", "", "the data directory DATA whose log (labmate.db) the run is written to, where labmate serve shows it (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)")
	return cmd
}

func newLabShowCmd() *cobra.Command {
	var (
		workspace string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the plate maps of the workspace's bench",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := workspaceDir(workspace)
			if err != nil {
				return err
			}
			d, err := benchrun.Open(cmd.Context(), ws)
			if err != nil {
				return err
			}
			return printBench(cmd.OutOrStdout(), &benchrun.Report{Deck: d}, asJSON)
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "the workspace whose bench to show (default: the current directory)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the bench as JSON")
	return cmd
}

// workspaceDir is --workspace dir made absolute, which must be a directory; the current
// directory when dir is empty.
func workspaceDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--workspace %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--workspace %s: not a directory", dir)
	}
	return abs, nil
}
