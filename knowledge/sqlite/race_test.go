//go:build race

package sqlite_test

// raceEnabled: under the race detector the pure-Go SQLite runs ~60 times slower, so indexing the
// whole Octave help takes minutes; `make test` runs the retrieval test without -race instead.
const raceEnabled = true
