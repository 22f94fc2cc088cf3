package dataset_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/dataset"
)

// levels is a CSV of n rows whose column lig has n distinct levels, in group A.
func levels(n int) string {
	var b strings.Builder
	b.WriteString("sub,lig,yield\n")
	for i := range n {
		fmt.Fprintf(&b, "A,L%d,%d\n", i, i%100)
	}
	return b.String()
}

// The attack of issue 16: a ~1 MB upload with 100,000 distinct levels, which once built a
// 10¹⁰-entry distance matrix and killed the server. It is refused in well under a second,
// naming the limit and the value, with little memory allocated on the way.
func TestHundredThousandLevels(t *testing.T) {
	csv := levels(100_000)
	if len(csv) < 1<<20 {
		t.Fatalf("the attack is %d bytes, want about 1 MB", len(csv))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	t0 := time.Now()
	_, err := dataset.Read(strings.NewReader(csv), "levels.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig"}, Groups: []string{"sub"}})
	took := time.Since(t0)
	runtime.ReadMemStats(&after)
	want := `levels.csv:1002, column "lig": 100000 levels; at most 1000 are allowed`
	if !errors.Is(err, dataset.ErrTooLarge) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrTooLarge saying %q", err, want)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("refused in %v, %.1f MB allocated", took, float64(alloc)/(1<<20))
	if took > 5*time.Second || alloc > 64<<20 {
		t.Errorf("refused in %v with %d MB allocated; want well under 5 s and 64 MB", took, alloc>>20)
	}
}

// Every limit, just under (read) and just over (refused naming the limit and the value).
func TestLimits(t *testing.T) {
	lim := dataset.DefaultLimits
	header := func(cols int) string {
		h := []string{"sub", "lig", "yield"}
		for i := 3; i < cols; i++ {
			h = append(h, fmt.Sprintf("c%d", i))
		}
		return strings.Join(h, ",")
	}
	wide := func(cols int) string { // one row, cols columns
		return header(cols) + "\nA,L1,1" + strings.Repeat(",x", cols-3) + "\n"
	}
	groups := func(n int) string {
		var b strings.Builder
		b.WriteString("sub,lig,yield\n")
		for i := range n {
			fmt.Fprintf(&b, "S%d,L1,1\n", i)
		}
		return b.String()
	}
	rows := func(n int) string { // 100 levels × n/100 groups
		var b strings.Builder
		b.WriteString("sub,lig,yield\n")
		for i := range n {
			fmt.Fprintf(&b, "S%d,L%d,1\n", i/100, i%100)
		}
		return b.String()
	}
	total := func(n int) string { // 1000 levels of a, one of c, the rest of b
		var b strings.Builder
		b.WriteString("sub,a,b,c,yield\n")
		for i := range 1000 {
			fmt.Fprintf(&b, "A,a%d,b%d,c0,1\n", i, i%(n-1001))
		}
		return b.String()
	}
	long := func(n int) string { // the data line has n bytes
		return "sub,lig,yield\nA," + strings.Repeat("x", n-4) + ",1\n"
	}
	big := func(n int) string { // n bytes: one row, then dropped ones
		var b strings.Builder
		b.WriteString("sub,lig,yield,pad\nA,L0,1,\n")
		for pad := n - b.Len(); pad > 0; {
			line := min(pad, 1000)
			b.WriteString("Z,L0,1," + strings.Repeat("x", line-8) + "\n")
			pad -= line
		}
		return b.String()
	}
	one := []string{"lig"}
	names := func(n int, prefix string) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%d", prefix, i))
		}
		return out
	}
	for _, c := range []struct {
		name  string
		csv   func(int) string
		vars  []string
		limit int
		want  string // in the refusal of limit+1
	}{
		{"levels", levels, one, lim.Levels, `column "lig": 1001 levels; at most 1000 are allowed`},
		{"total levels", total, []string{"a", "b", "c"}, lim.TotalLevels, `column "a,b,c": 2001 levels over all the variables; at most 2000 are allowed`},
		{"columns", wide, one, lim.Columns, `:1: 257 columns; at most 256 are allowed`},
		{"rows", rows, one, lim.Rows, `:100002: 100001 rows; at most 100000 are allowed`},
		{"groups", groups, one, lim.Groups, `column "sub": 1001 groups; at most 1000 are allowed`},
		{"line", long, one, lim.LineBytes, `:2: the line has 65537 bytes; at most 65536 are allowed`},
		{"bytes", big, one, int(lim.Bytes), `more than 16777216 bytes; at most 16777216 are allowed`},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := &dataset.Options{Objective: "yield", Vars: c.vars, Groups: []string{"sub"}, Drop: map[string][]string{"sub": {"Z"}}}
			if _, err := dataset.Read(strings.NewReader(c.csv(c.limit)), "x.csv", o); err != nil {
				t.Fatalf("at the limit (%d): %v", c.limit, err)
			}
			_, err := dataset.Read(strings.NewReader(c.csv(c.limit+1)), "x.csv", o)
			if !errors.Is(err, dataset.ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("over the limit: %v, want ErrTooLarge saying %q", err, c.want)
			}
		})
	}
	// Far over, the value is still counted exactly.
	_, err := dataset.Read(strings.NewReader(groups(5000)), "x.csv", &dataset.Options{Objective: "yield", Vars: one, Groups: []string{"sub"}})
	if err == nil || !strings.Contains(err.Error(), "5000 groups; at most 1000") {
		t.Errorf("5000 groups: %v", err)
	}
	_, err = dataset.Read(strings.NewReader(rows(1_000_000)), "x.csv", &dataset.Options{Objective: "yield", Vars: one, Groups: []string{"sub"}, Limits: &dataset.Limits{Bytes: 64 << 20}})
	if err == nil || !strings.Contains(err.Error(), "1000000 rows; at most 100000") {
		t.Errorf("a million rows: %v", err)
	}
	// The columns the caller names are bounded too.
	for _, c := range []struct {
		o    *dataset.Options
		want string
	}{
		{&dataset.Options{Objective: "yield", Vars: names(17, "v")}, "17 variable columns; at most 16 are allowed"},
		{&dataset.Options{Objective: "yield", Vars: one, Groups: names(9, "g")}, "9 group columns; at most 8 are allowed"},
	} {
		if _, err := dataset.Read(strings.NewReader(levels(3)), "x.csv", c.o); !errors.Is(err, dataset.ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.o, err, c.want)
		}
	}
	// A line too long is refused before the CSV reader holds it whole, whatever its length.
	huge := "sub,lig,yield\nA," + strings.Repeat("x", 60<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = dataset.Read(strings.NewReader(huge), "x.csv", &dataset.Options{Objective: "yield", Vars: one, Limits: &dataset.Limits{Bytes: 1 << 30}})
	runtime.ReadMemStats(&after)
	if !strings.Contains(err.Error(), ":2: the line has 62914562 bytes; at most 65536") {
		t.Errorf("a 60 MB line: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("a 60 MB line allocated %d MB", alloc>>20)
	}
}

// The options are checked: a column in two roles, or twice in one.
func TestColumnRoles(t *testing.T) {
	for _, c := range []struct {
		o    *dataset.Options
		want string
	}{
		{&dataset.Options{Objective: "yield", Vars: []string{"lig", "lig"}}, `column "lig": the column is named twice as a variable`},
		{&dataset.Options{Objective: "yield", Vars: []string{"yield"}}, `column "yield": a column cannot be both the objective and a variable`},
		{&dataset.Options{Objective: "yield", Vars: []string{"lig"}, Groups: []string{"lig"}}, `column "lig": a column cannot be both a variable and a group`},
	} {
		if _, err := dataset.Read(strings.NewReader(levels(3)), "x.csv", c.o); !errors.Is(err, dataset.ErrBadCSV) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}

// The largest table within the limits is read with bounded memory: 100,000 rows (17 times
// Suzuki) of 10 groups.
func TestLargestTableMemory(t *testing.T) {
	var b strings.Builder
	b.WriteString("sub,lig,base,yield\n")
	for i := range dataset.DefaultLimits.Rows {
		fmt.Fprintf(&b, "S%d,L%d,B%d,%d.5\n", i/10000, i/100%100, i%100, i%97)
	}
	csv := b.String()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tb, err := dataset.Read(strings.NewReader(csv), "big.csv", &dataset.Options{Objective: "yield", Vars: []string{"lig", "base"}, Groups: []string{"sub"}})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d bytes of CSV: %.1f MB allocated, %.1f MB held", len(csv), float64(alloc)/(1<<20), float64(held)/(1<<20))
	if alloc > 256<<20 || held > 128<<20 {
		t.Errorf("%d MB allocated, %d MB held", alloc>>20, held>>20)
	}
	if len(tb.Groups) != 10 || tb.Groups[0].N != 10000 {
		t.Errorf("%d groups", len(tb.Groups))
	}
	runtime.KeepAlive(tb)
}
