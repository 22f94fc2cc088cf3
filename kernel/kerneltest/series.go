package kerneltest

import (
	"math"

	"github.com/labmate/labmate/protocol"
)

// Series gathers a result's telemetry samples by series name, in order.
func (r *Result) Series() map[string][]float64 {
	m := map[string][]float64{}
	for _, o := range r.Obs {
		if o.Kind == protocol.ObsTelemetry {
			m[o.Sample.Name] = append(m[o.Sample.Name], o.Sample.Value)
		}
	}
	return m
}

// Times gathers the simulation times of a series' samples, in order; NaN for a sample without.
func (r *Result) Times(name string) []float64 {
	var ts []float64
	for _, o := range r.Obs {
		if o.Kind == protocol.ObsTelemetry && o.Sample.Name == name {
			t := math.NaN()
			if o.Sample.T != nil {
				t = *o.Sample.T
			}
			ts = append(ts, t)
		}
	}
	return ts
}
