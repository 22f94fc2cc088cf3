package storetest_test

import (
	"testing"

	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) protocol.Store { return protocol.NewMemStore() })
}
