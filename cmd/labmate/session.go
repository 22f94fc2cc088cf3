package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/runner"
	"github.com/labmate/labmate/runner/locallog"
)

func newSessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "The sessions of the data directory's log: list, show (and --artifact to get a cell's figure back)",
		Long: `The sessions of the log DATA/labmate.db, the one story every labmate process of this machine
writes: a labmate exec cell (run here or with --server), the cells run on the dashboard, an agent
run, a job a server followed, a campaign. They are read beside a running labmate serve, and
after it has stopped.

labmate session list lists them as the dashboard does; labmate session show ID shows one, with
the artifacts its cells reported, and --artifact PATH writes one of them (a figure, a table)
from the data directory's artifact store, after the session's workspace has gone.`,
	}
	cmd.AddCommand(newSessionListCmd(), newSessionShowCmd())
	return cmd
}

// logDataHelp is the help of --data for a command that reads or writes the data directory's log.
const logDataHelp = "data directory holding the log labmate.db (default $XDG_DATA_HOME/labmate or ~/.local/share/labmate)"

func newSessionListCmd() *cobra.Command {
	var (
		data   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the log, as the dashboard does",
		Long: `List the sessions of the log DATA/labmate.db in the order GET /v1/sessions gives them: id, kind,
operations, last update and what the session is (its name, or its title: the file of a
labmate exec cell, an agent run's task, a job's command). --json prints the same JSON array as
GET /v1/sessions (times in Unix seconds).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := dataDir(data)
			if err != nil {
				return err
			}
			log, err := locallog.OpenReadOnly(dir)
			if err != nil {
				return err
			}
			defer log.Close()
			list, err := runner.ListSessions(cmd.Context(), log)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(list)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tOPS\tUPDATED\tWHAT")
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID, cmp.Or(s.Kind, "cells"), s.Operations, unixTime(s.Updated), cmp.Or(s.Name, s.Title))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as one JSON array")
	cmd.Flags().StringVar(&data, "data", "", logDataHelp)
	return cmd
}

// sessionShow is what labmate session show --json prints.
type sessionShow struct {
	Session    runner.SessionListing    `json:"session"`
	Operations []protocol.OperationInfo `json:"operations"`
	Artifacts  []*protocol.Artifact     `json:"artifacts"` // the newest report of each path
}

func newSessionShowCmd() *cobra.Command {
	var (
		data   string
		art    artifactFlag
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session: its operations and the artifacts its cells reported",
		Long: `Show one session of the log DATA/labmate.db: what it is, its operations (id, kind, state,
when) and the artifacts its cells and jobs reported (path, MIME type, size). The id is the
one labmate session list, the dashboard's address, labmate exec --server --session or labmate
exec's stderr give. --json prints {"session": …, "operations": […], "artifacts": […]}.

--artifact PATH writes the bytes of an artifact of the session (a figure, a table: its path in
the workspace) to standard output, from the data directory's artifact store (DATA/artifacts),
where it is kept by its digest after the workspace has changed or gone.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := dataDir(data)
			if err != nil {
				return err
			}
			ctx, id := cmd.Context(), args[0]
			log, err := locallog.OpenReadOnly(dir)
			if err != nil {
				return err
			}
			defer log.Close()
			row, err := runner.ListSession(ctx, log, id)
			if errors.Is(err, protocol.ErrUnknownSession) {
				return fmt.Errorf("session %q: not in the log %s/%s (labmate session list shows the sessions there, --data names another directory)", id, dir, locallog.File)
			}
			if err != nil {
				return err
			}
			if art.set() {
				return art.write(ctx, cmd.OutOrStdout(), dir, id, "session "+id, nil)
			}
			ops, err := log.Operations(ctx, id)
			if err != nil {
				return err
			}
			show := sessionShow{Session: row, Operations: []protocol.OperationInfo{}, Artifacts: []*protocol.Artifact{}}
			for _, o := range ops {
				if o.ID != protocol.SessionStream {
					show.Operations = append(show.Operations, o)
				}
			}
			at := map[string]int{}
			for a := range runner.Reported(ctx, log, id, "") {
				if i, ok := at[a.Path]; ok {
					show.Artifacts[i] = a
					continue
				}
				at[a.Path] = len(show.Artifacts)
				show.Artifacts = append(show.Artifacts, a)
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(show)
			}
			return printSession(cmd.OutOrStdout(), &show)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session as one JSON object")
	art.add(cmd, "session")
	cmd.Flags().StringVar(&data, "data", "", logDataHelp)
	return cmd
}

func printSession(w io.Writer, s *sessionShow) error {
	r := s.Session
	fmt.Fprintf(w, "session %s", r.ID)
	if what := cmp.Or(r.Name, r.Title); what != "" {
		fmt.Fprintf(w, ": %s", what)
	}
	fmt.Fprintf(w, "\ncreated %s, updated %s", unixTime(r.Created), unixTime(r.Updated))
	if r.Closed {
		fmt.Fprint(w, ", closed")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\noperations (%d):\n", len(s.Operations))
	for _, o := range s.Operations {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", o.ID, o.Kind, o.State, unixTime(o.Created))
	}
	if len(s.Artifacts) == 0 {
		fmt.Fprintln(tw, "\nno artifacts")
		return tw.Flush()
	}
	fmt.Fprintf(tw, "\nartifacts (%d; labmate session show %s --artifact PATH writes one):\n", len(s.Artifacts), r.ID)
	for _, a := range s.Artifacts {
		kept := "kept"
		if a.SHA256 == "" {
			kept = "not kept (no digest)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d bytes\t%s\n", a.Path, a.MIMEType, a.Size, kept)
	}
	return tw.Flush()
}

// unixTime prints Unix seconds as local time, "-" for none.
func unixTime(s float64) string {
	if s <= 0 {
		return "-"
	}
	return time.Unix(0, int64(s*1e9)).Local().Format("2006-01-02 15:04:05")
}
