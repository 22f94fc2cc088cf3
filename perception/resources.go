package perception

import (
	"fmt"

	"github.com/labmate/labmate/protocol"
)

// resources reports a run approaching its sandbox's limits, from resource samples.
//
// Resident memory at MemoryWarning (default 80%) of the memory limit is a Warning, at
// MemoryError (default 95%) an Error. The Error comes before the limit on purpose: past it
// allocations fail wherever the code happens to be (or the machine swaps), while an interrupt at
// 95% stops the run cleanly with its workspace (and the agent learns which step blew up). 80% leaves room for the ordinary ups and downs
// of a run that allocates and frees temporaries, yet with resource samples every half-second
// still warns a few samples before a steadily growing run reaches the Error. The limit is the
// sample's MemoryLimit, else Thresholds.MemoryLimit; with neither, memory is not judged.
//
// Output at OutputWarning (default 80%) of the output limit is a Warning only: going over the
// limit truncates the output, it does not lose results.
//
// Unlike the other detectors these are conditions, not events: when memory falls back below
// 80%, the Warning clears.
type resources struct {
	memWarn, memErr, outWarn float64
	memLimit                 int64
}

func (d *resources) sample(r *protocol.Resource) finding {
	limit := r.MemoryLimit
	if limit <= 0 {
		limit = d.memLimit
	}
	if limit > 0 {
		share := float64(r.RSSBytes) / float64(limit)
		if share >= d.memWarn {
			st, sev := protocol.Warning, 0.3+0.3*min(1, (share-d.memWarn)/max(d.memErr-d.memWarn, 1e-9))
			if share >= d.memErr {
				st, sev = protocol.Error, 0.9
			}
			return finding{
				state:    st,
				message:  fmt.Sprintf("memory at %.0f%% of the limit", 100*share),
				evidence: fmt.Sprintf("rss %s of %s", bytesHuman(r.RSSBytes), bytesHuman(limit)),
				severity: sev,
			}
		}
	}
	if r.OutputLimit > 0 {
		if share := float64(r.OutputBytes) / float64(r.OutputLimit); share >= d.outWarn {
			return finding{
				state:    protocol.Warning,
				message:  fmt.Sprintf("output at %.0f%% of the limit", 100*share),
				evidence: fmt.Sprintf("output %s of %s", bytesHuman(r.OutputBytes), bytesHuman(r.OutputLimit)),
				severity: 0.4,
			}
		}
	}
	return finding{state: protocol.Normal}
}

func bytesHuman(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}
