//go:build unix

package sqlite

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// A process stopped inside a write transaction (Ctrl-Z, SIGTSTP) would hold the file's write
// lock, and with it every other process's appends, the server's too, for as long as it stays
// stopped. So a process with a writing Store open stops only between transactions: on SIGTSTP every open Store
// commits what it appended and holds its appends, the process stops itself (SIGSTOP), and when
// it is continued the appends go on. (SIGSTOP itself cannot be caught: other writers then wait
// at most turnWait for the turn, and SQLite's busy timeout for the lock.)
var stopping struct {
	sync.Mutex
	stores map[*Store]struct{}
	ch     chan os.Signal // SIGTSTP
}

// stopsCleanly registers s with the stop handler, starting it with the first Store.
func stopsCleanly(s *Store) {
	stopping.Lock()
	defer stopping.Unlock()
	if stopping.ch == nil {
		stopping.stores = make(map[*Store]struct{})
		stopping.ch = make(chan os.Signal, 1)
		signal.Notify(stopping.ch, syscall.SIGTSTP)
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, syscall.SIGCONT)
		go stopHandler(stopping.ch, cont)
	}
	stopping.stores[s] = struct{}{}
}

// stopsNoMore unregisters s (closed).
func stopsNoMore(s *Store) {
	stopping.Lock()
	delete(stopping.stores, s)
	stopping.Unlock()
}

func stopHandler(stop, cont <-chan os.Signal) {
	for range stop {
		stopping.Lock()
		for s := range stopping.stores {
			s.wmu.Lock()
			if err := s.commit(); err != nil {
				s.fail(err)
			}
		}
		select {
		case <-cont: // an earlier one
		default:
		}
		// kill may return before every thread has stopped (another may be the one to stop
		// the group): the appends are held until the process was continued.
		syscall.Kill(syscall.Getpid(), syscall.SIGSTOP)
		<-cont
		for s := range stopping.stores {
			s.wmu.Unlock()
		}
		stopping.Unlock()
	}
}
