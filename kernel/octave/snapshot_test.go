package octave_test

import (
	"testing"

	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/kernel/kerneltest"
)

func TestSnapshots(t *testing.T) {
	kerneltest.Snapshots(t, kerneltest.SnapLang{
		Lang: lang,
		Set: `A = magic(4);
s.name = "plant"; s.gains = [1 2 3]; s.nested.k = int8(5);
c = {1, "two", [3 4]};
z = 1 + 2i; flag = true; txt = "hello";
sq = @(v) v.^2 + A(1);
m = containers.Map(); m("k") = 1;
holder.map = m;`,
		Saved: []string{"A", "s", "c", "z", "flag", "txt", "sq"},
		Skipped: map[string]string{
			"m":      "containers.Map: ",
			"holder": "struct: ",
		},
		Check: `if isequal(A, magic(4)) && strcmp(s.name, "plant") && isequal(s.gains, [1 2 3]) && isa(s.nested.k, "int8") && ...
   isequal(c, {1, "two", [3 4]}) && z == 1 + 2i && flag && strcmp(txt, "hello") && sq(2) == 20
  disp("OK")
else
  disp("WRONG")
end`,
	}, testutil.KernelOptions(t))
}
