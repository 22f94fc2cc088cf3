package protocol

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSampleNonFiniteJSON(t *testing.T) {
	half := 0.5
	for _, s := range []Sample{
		{Name: "x", Value: 3.25, Source: FromStdout},
		{Name: "x", Value: math.NaN(), Source: FromHelper},
		{Name: "v", Value: math.Inf(1), Values: []float64{math.Inf(1), math.Inf(-1), 1e-300}, T: &half, Source: FromHelper},
	} {
		b, err := json.Marshal(&Observation{Kind: ObsTelemetry, Sample: &s})
		if err != nil {
			t.Fatalf("marshal %v: %v", s, err)
		}
		var o Observation
		if err := json.Unmarshal(b, &o); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if d := cmp.Diff(&s, o.Sample, cmpopts.EquateNaNs()); d != "" {
			t.Errorf("round trip of %s (-want +got):\n%s", b, d)
		}
	}
	var s Sample
	if err := json.Unmarshal([]byte(`{"name":"x","value":"lots"}`), &s); err == nil {
		t.Error(`value "lots" was accepted`)
	}
	if b, _ := json.Marshal(Sample{Name: "x", Value: math.NaN()}); string(b) != `{"name":"x","value":"NaN","source":""}` {
		t.Errorf("NaN encodes as %s", b)
	}
}
