package benchrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labmate/labmate/lab/bench"
)

// The Opentrons Protocol Library's conventions: a protocol's parameters are the defaults of a
// fields.json beside it (get_values), and its custom labware are the definitions in a labware/
// folder beside it.

// field is one entry of a fields.json.
type field struct {
	Type    string          `json:"type"`
	Name    string          `json:"name"`
	Default json.RawMessage `json:"default"`
	Options []struct {
		Value json.RawMessage `json:"value"`
	} `json:"options"`
}

// ReadFields reads a fields.json: each field's default, or its first option's value.
func ReadFields(file string) (bench.Params, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("fields: %w", err)
	}
	var fields []field
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	p := bench.Params{}
	for i, f := range fields {
		switch {
		case f.Name == "":
			return nil, fmt.Errorf("%s: field %d has no name", file, i+1)
		case len(f.Default) > 0:
			p[f.Name] = f.Default
		case len(f.Options) > 0:
			p[f.Name] = f.Options[0].Value
		default:
			return nil, fmt.Errorf("%s: field %q has neither a default nor options", file, f.Name)
		}
	}
	return p, nil
}

// ParseParam reads NAME=VALUE: VALUE as JSON when it is (a number, true, a quoted string…),
// else as a string.
func ParseParam(p bench.Params, s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("--param %q: give NAME=VALUE", s)
	}
	if json.Valid([]byte(value)) {
		p[name] = json.RawMessage(value)
		return nil
	}
	b, _ := json.Marshal(value)
	p[name] = b
	return nil
}

// ReadLabware reads the labware definitions (*.json) of a folder; a file that is not one is
// named in skipped with why, not an error.
func ReadLabware(dir string) (defs []*bench.Labware, skipped []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("labware %s: %w", dir, err)
	}
	slices.Sort(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("labware: %w", err)
		}
		lw, err := bench.ParseLabware(b)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", f, err))
			continue
		}
		defs = append(defs, lw)
	}
	return defs, skipped, nil
}

// Beside reads what the Protocol Library keeps beside a protocol file: the defaults of
// fields.json (nil when there is none) and the definitions of labware/.
func Beside(protocol string) (bench.Params, []*bench.Labware, []string, error) {
	dir := filepath.Dir(protocol)
	params, err := ReadFields(filepath.Join(dir, "fields.json"))
	if errors.Is(err, os.ErrNotExist) {
		params, err = nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	defs, skipped, err := ReadLabware(filepath.Join(dir, "labware"))
	if err != nil {
		return nil, nil, nil, err
	}
	return params, defs, skipped, nil
}
