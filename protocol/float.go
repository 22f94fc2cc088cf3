package protocol

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// float is a float64 that survives JSON when it is not finite: telemetry is exactly where NaN
// and ±Inf show up, and encoding/json refuses them. They travel as the strings "NaN", "Inf"
// and "-Inf"; finite values are plain JSON numbers.
type float float64

// MarshalJSON implements json.Marshaler.
func (f float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"NaN"`), nil
	case math.IsInf(v, 1):
		return []byte(`"Inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*f = float(math.NaN())
	case `"Inf"`, `"+Inf"`:
		*f = float(math.Inf(1))
	case `"-Inf"`:
		*f = float(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(string(b), 64)
		if err != nil {
			return fmt.Errorf("protocol: %s is not a number, \"NaN\", \"Inf\" or \"-Inf\"", b)
		}
		*f = float(v)
	}
	return nil
}

// sampleJSON is Sample's wire form.
type sampleJSON struct {
	Name   string       `json:"name"`
	Value  float        `json:"value"`
	Values []float      `json:"values,omitempty"`
	T      *float       `json:"t,omitempty"`
	Source SampleSource `json:"source"`
}

// MarshalJSON encodes the sample; non-finite values become "NaN", "Inf" or "-Inf".
func (s Sample) MarshalJSON() ([]byte, error) {
	w := sampleJSON{Name: s.Name, Value: float(s.Value), Source: s.Source}
	if s.Values != nil {
		w.Values = make([]float, len(s.Values))
		for i, v := range s.Values {
			w.Values[i] = float(v)
		}
	}
	if s.T != nil {
		t := float(*s.T)
		w.T = &t
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes a sample encoded by MarshalJSON.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var w sampleJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = Sample{Name: w.Name, Value: float64(w.Value), Source: w.Source}
	if w.Values != nil {
		s.Values = make([]float64, len(w.Values))
		for i, v := range w.Values {
			s.Values[i] = float64(v)
		}
	}
	if w.T != nil {
		t := float64(*w.T)
		s.T = &t
	}
	return nil
}
