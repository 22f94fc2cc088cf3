package perception

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/labmate/labmate/protocol"
)

func TestResources(t *testing.T) {
	const gib = 1 << 30
	limit := int64(4 * gib)
	share := func(f float64) int64 { return int64(math.Ceil(f * float64(limit))) }
	output := func(bytes, lim int64) *protocol.Observation {
		return &protocol.Observation{Kind: protocol.ObsResource, Time: ts(1), Resource: &protocol.Resource{OutputBytes: bytes, OutputLimit: lim}}
	}
	tests := []struct {
		name string
		cfg  *Config
		obs  []*protocol.Observation
		want []emitted
	}{
		{"memory just under 80%", nil, []*protocol.Observation{resource(1, 1, share(0.799), limit)}, nil},
		{"memory at 80%", nil, []*protocol.Observation{resource(1, 1, share(0.80), limit)}, []emitted{{0, protocol.Warning, DetectorResources}}},
		{"memory just under 95%", nil, []*protocol.Observation{resource(1, 1, share(0.949), limit)}, []emitted{{0, protocol.Warning, DetectorResources}}},
		{"memory at 95%", nil, []*protocol.Observation{resource(1, 1, share(0.95), limit)}, []emitted{{0, protocol.Error, DetectorResources}}},
		{"no limit known", nil, []*protocol.Observation{resource(1, 1, 100*gib, 0)}, nil},
		{"limit from the config", &Config{Thresholds: Thresholds{MemoryLimit: limit}}, []*protocol.Observation{resource(1, 1, share(0.96), 0)}, []emitted{{0, protocol.Error, DetectorResources}}},
		{"growing", nil, []*protocol.Observation{
			resource(0.5, 1, share(0.5), limit), resource(1, 1, share(0.82), limit), resource(1.5, 1, share(0.9), limit), resource(2, 1, share(0.97), limit),
		}, []emitted{{1, protocol.Warning, DetectorResources}, {3, protocol.Error, DetectorResources}}},
		{"memory freed: the Warning clears", nil, []*protocol.Observation{
			resource(0.5, 1, share(0.85), limit), resource(1, 1, share(0.4), limit),
		}, []emitted{{0, protocol.Warning, DetectorResources}, {1, protocol.Normal, ""}}},
		{"output just under 80%", nil, []*protocol.Observation{output(799, 1000)}, nil},
		{"output at 80%", nil, []*protocol.Observation{output(800, 1000)}, []emitted{{0, protocol.Warning, DetectorResources}}},
		{"output over the limit is a Warning only", nil, []*protocol.Observation{output(5000, 1000)}, []emitted{{0, protocol.Warning, DetectorResources}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := feed(newMonitor(t, tt.cfg), tt.obs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdicts mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourcesEvidence(t *testing.T) {
	m := newMonitor(t, nil)
	v := m.Observe(resource(1, 1, 3565158400, 4<<30))
	want := &protocol.Verdict{
		State:    protocol.Warning,
		Detector: DetectorResources,
		Message:  "memory at 83% of the limit",
		Evidence: []string{"rss 3.3 GiB of 4.0 GiB"},
		Severity: 0.3 + 0.3*(3565158400.0/(4<<30)-0.8)/0.15,
		Action:   protocol.ActionAnnotate,
	}
	if diff := cmp.Diff(want, v, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("verdict mismatch (-want +got):\n%s", diff)
	}
	// A later sample at a different share updates the message without a new verdict.
	if v := m.Observe(resource(1.5, 1, 3665158400, 4<<30)); v != nil {
		t.Errorf("second Warning sample emitted %+v", v)
	}
	if got := m.Verdict().Message; got != "memory at 85% of the limit" {
		t.Errorf("Verdict().Message = %q", got)
	}
}

func TestBytesHuman(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536 << 20: "1.5 GiB", 4 << 40: "4.0 TiB"} {
		if got := bytesHuman(n); got != want {
			t.Errorf("bytesHuman(%d) = %q, want %q", n, got, want)
		}
	}
}
