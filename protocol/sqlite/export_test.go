package sqlite

// SetWALLimit sets walLimit for a test and returns what puts it back.
func SetWALLimit(n int64) func() {
	old := walLimit
	walLimit = n
	return func() { walLimit = old }
}
