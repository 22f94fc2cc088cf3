package sqlite

// SetWALLimit sets walLimit for a test and returns what puts it back.
func SetWALLimit(n int64) func() {
	old := walLimit
	walLimit = n
	return func() { walLimit = old }
}

// SetReadFault makes Tail's reads fail with what fault returns, and returns what puts them back.
func SetReadFault(fault func() error) func() {
	old := readFault
	readFault = fault
	return func() { readFault = old }
}
