package kernel_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
)

func TestCellValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cell *kernel.Cell
		want string // "" = valid
	}{
		{"ok", &kernel.Cell{Code: "x = 1\nprint('é')"}, ""},
		{"empty", &kernel.Cell{}, ""},
		{"nil", nil, "nil cell"},
		{"binary", &kernel.Cell{Code: "ab\xffcd"}, "invalid byte 0xff at offset 2"},
		{"nul", &kernel.Cell{Code: "x\x00"}, "NUL byte at offset 1"},
		{"negativeTimeout", &kernel.Cell{Code: "x", Timeout: -time.Second}, "negative timeout -1s"},
	} {
		err := c.cell.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", c.name, err)
		case c.want != "" && (!errors.Is(err, kernel.ErrBadCell) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want ErrBadCell mentioning %q", c.name, err, c.want)
		}
	}
}
