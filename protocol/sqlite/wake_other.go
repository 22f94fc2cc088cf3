//go:build !linux

package sqlite

// walWrites watches nothing where inotify does not exist: Tail polls.
func walWrites(path string) (<-chan struct{}, func()) { return nil, func() {} }
