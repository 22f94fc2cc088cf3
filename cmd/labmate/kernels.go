package main

import (
	"encoding/json"
	"fmt"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/labmate/labmate/sandbox"
)

func newKernelsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "kernels",
		Short: "List the kernels, their interpreter versions and the sandbox in use",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			type row struct {
				Name    string `json:"name"`
				Version string `json:"version,omitempty"`
				Error   string `json:"error,omitempty"`
			}
			rows := make([]row, len(kernels))
			var wg sync.WaitGroup
			for i, k := range kernels {
				wg.Go(func() {
					rows[i].Name = k.name
					v, err := k.version(cmd.Context())
					rows[i].Version = v
					if err != nil {
						rows[i].Error = err.Error()
					}
				})
			}
			wg.Wait()
			var isolation, problem string
			if mode, err := sandbox.Detect(); err != nil {
				problem = err.Error()
			} else if sb, err := sandbox.New(mode, nil); err != nil {
				problem = err.Error()
			} else {
				isolation = sb.Describe()
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{
					"kernels": rows,
					"sandbox": map[string]any{"available": problem == "", "description": isolation, "error": problem},
				})
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KERNEL\tVERSION")
			for _, r := range rows {
				v := r.Version
				if r.Error != "" {
					v = "NOT AVAILABLE: " + r.Error
				}
				fmt.Fprintf(w, "%s\t%s\n", r.Name, v)
			}
			w.Flush()
			if problem != "" {
				fmt.Fprintf(out, "\nSANDBOX: NONE AVAILABLE — %s\n"+
					"!!! labmate refuses to run code without isolation unless you pass --no-sandbox !!!\n", problem)
				return exitError{1}
			}
			fmt.Fprintf(out, "\nsandbox: %s\n", isolation)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
