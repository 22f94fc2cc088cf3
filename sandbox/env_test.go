package sandbox_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/labmate/labmate/sandbox"
)

func TestCheckUserEnv(t *testing.T) {
	for _, name := range []string{"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "PYTHONSTARTUP",
		"PYTHONPATH", "BASH_ENV", "ENV", "NODE_OPTIONS", "PERL5OPT", "OCTAVE_HOME", "GLIBC_TUNABLES", "BASH_FUNC_x"} {
		err := sandbox.CheckUserEnv(map[string]string{"OK": "1", name: "/tmp/evil"})
		if !errors.Is(err, sandbox.ErrEnvRefused) || !strings.Contains(err.Error(), name+":") {
			t.Errorf("%s: got %v, want a refusal naming it", name, err)
		}
	}
	for _, name := range []string{"PATH", "HOME", "OMP_NUM_THREADS", "PYTHONUNBUFFERED", "LANG", "MY_LD_PRELOAD", "TMPDIR"} {
		if err := sandbox.CheckUserEnv(map[string]string{name: "x"}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if names := sandbox.RefusedEnvNames(); len(names) < 30 || names[0] == "" {
		t.Errorf("RefusedEnvNames: %v", names)
	}
}
