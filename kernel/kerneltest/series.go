package kerneltest

import "github.com/labmate/labmate/protocol"

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
