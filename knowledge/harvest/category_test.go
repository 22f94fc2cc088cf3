package harvest

import "testing"

func TestCategory(t *testing.T) {
	for file, want := range map[string]string{
		"/usr/share/octave/7.3.0/m/ode/ode15s.m":                                           "ode",
		"/usr/share/octave/7.3.0/m/linear-algebra/expm.m":                                  "linear-algebra",
		"/usr/share/octave/packages/signal-1.4.3/butter.m":                                 "signal",
		"/usr/lib/x86_64-linux-gnu/octave/packages/control-3.4.0/x/ss.oct":                 "control",
		"/usr/share/octave/7.3.0/m/strings/private/__x__.m":                                "strings/private",
		"/usr/share/octave/7.3.0/m/@ftp/ftp.m":                                             "m/@ftp",
		"/usr/lib/x86_64-linux-gnu/octave/7.3.0/oct/x86_64-pc-linux-gnu/__init_fltk__.oct": "built-in",
		"": "built-in",
	} {
		if got := category(file); got != want {
			t.Errorf("category(%q) = %q; want %q", file, got, want)
		}
	}
}
