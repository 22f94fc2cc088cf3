//go:build race

package sandbox

// raceEnabled: under the race detector the quota's watchdog runs several times slower than in
// labmate's build. TestQuotaEmptyFiles is skipped under it: even without it, the test does not
// hold reliably yet (run it alone with go test -run TestQuotaEmptyFiles ./sandbox).
const raceEnabled = true
