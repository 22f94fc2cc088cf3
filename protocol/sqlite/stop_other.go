//go:build !unix

package sqlite

func stopsCleanly(*Store) {}
func stopsNoMore(*Store)  {}
