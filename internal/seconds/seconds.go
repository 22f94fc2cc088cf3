// Package seconds is how labmate's JSON carries a duration: seconds, as a float, with the
// unit in the field's name (duration_s, elapsed_s). Records written before that carried
// nanoseconds (NAME_ns); Duration reads either, so old logs and checkpoints still decode.
package seconds

import (
	"math"
	"time"
)

// Of is d in seconds, as JSON carries it.
func Of(d time.Duration) float64 { return d.Seconds() }

// Duration is the duration a record carries as s seconds (NAME_s) or, in a record written
// before durations were seconds, as ns nanoseconds (NAME_ns); 0 when it carries neither.
func Duration(s *float64, ns *int64) time.Duration {
	switch {
	case s != nil && !math.IsNaN(*s) && !math.IsInf(*s, 0):
		return time.Duration(math.Round(*s * float64(time.Second)))
	case ns != nil:
		return time.Duration(*ns)
	}
	return 0
}
