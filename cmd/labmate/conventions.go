package main

import "github.com/spf13/pflag"

// The command line's conventions (the README's "CLI conventions"): a count is --limit N; -n is
// always --namespace; --data DIR is labmate's data directory; --store is the store of the
// command's own noun (memory, docs, campaign), --memory-store the memory of a command whose
// noun is another; a memory budget is --mem-limit SIZE. A spelling of before stays as a
// deprecated alias that sets the same value and says what to write instead.

// alias adds old (with its one-letter shorthand, or none) as a deprecated spelling of the
// flag now of fs.
func alias(fs *pflag.FlagSet, old, shorthand, now string) {
	f := fs.Lookup(now)
	fs.VarP(f.Value, old, shorthand, f.Usage)
	fs.Lookup(old).NoOptDefVal = f.NoOptDefVal
	fs.MarkDeprecated(old, "write --"+now+" instead")
}
