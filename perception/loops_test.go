package perception

import (
	"strings"
	"testing"
)

func TestHasOpenLoop(t *testing.T) {
	for _, c := range []struct {
		name string
		open bool
		code string
	}{
		{"python while true", true, "x = 1\nwhile True:\n    x = f(x)\n    if abs(x - y) < 1e-10:\n        break\n"},
		{"python tolerance", true, "while err > tol:\n    u, err = sweep(u)\n"},
		{"python capped tolerance", true, "k = 0\nwhile k < maxit and res > tol:\n    k += 1\n    res = step()\n"},
		{"python float inequality", true, "t = 0.0\nwhile t != t_end:\n    t += 0.1\n"},
		{"python flag", true, "while not done:\n    done = step()\n"},
		{"python either bound", true, "while n < N or err > tol:\n    n += 1\n"},
		{"python counter never stepped", true, "while n < N:\n    total += random()\n"},
		{"python counted", false, "n = 0\nwhile n < 40_000_000:\n    x = random.random()\n    n += 1\n"},
		{"python bound first", false, "while N > n:  # darts\n    n = n + 1\n"},
		{"python clock", false, "t = 0.0\nwhile t < t_end:\n    y = rk4(y, dt)\n    t += dt\n"},
		{"python attribute clock", false, "while self.t < self.t_end:\n    self.t = self.t + self.dt\n"},
		{"python two counters", false, "while i < n and j < m:\n    i += 1\n    j += 1\n"},
		{"python one line", false, "while i < 10: i += 1\n"},
		{"octave do until", true, "do\n  x = g(x);\nuntil abs(x - g(x)) < 1e-12\n"},
		{"octave tolerance", true, "while (norm(r) > 1e-8)\n  r = b - A*x;\nend\n"},
		{"octave not equal", true, "while t ~= t_end\n  t = t + dt;\nend\n"},
		{"octave counted", false, "k = 1;\nwhile (k <= nmax)\n  s = s + 1/k^2;\n  k++;\nend\n"},
		{"octave clock", false, "while t < tf - dt/2,\n  x = x + dt*f(x);\n  t = t + dt;\nendwhile\n"},
		{"shell read", false, "while read ecut; do\n  pw.x < in.$ecut > out.$ecut\ndone < list\n"},
		{"shell ifs read", false, "while IFS= read -r line; do\n  echo \"$line\"\ndone < f\n"},
		{"shell counter", false, "i=0\nwhile [ \"$i\" -lt 10 ]; do\n  i=$((i+1))\ndone\n"},
		{"shell arithmetic", false, "while (( n < 100 )); do\n  (( n++ ))\ndone\n"},
		{"shell true", true, "while true; do\n  ./step\ndone\n"},
		{"shell test without step", true, "while [ ! -f done ]; do\n  ./work\ndone\n"},
		{"commented", false, "# while True:\n% while 1\nfor i in range(10):\n    pass\n"},
		{"a name that starts with while", false, "whilst = 3\nwhile_count = 2\n"},
	} {
		if got := hasOpenLoop(strings.ToLower(c.code)); got != c.open {
			t.Errorf("%s: hasOpenLoop = %v, want %v:\n%s", c.name, got, c.open, c.code)
		}
	}
}
