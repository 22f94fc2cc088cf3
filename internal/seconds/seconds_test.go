package seconds

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	for _, c := range []struct {
		s    *float64
		ns   *int64
		want time.Duration
	}{
		{f(1.5), nil, 1500 * time.Millisecond},
		{f(1.5), n(7), 1500 * time.Millisecond}, // the seconds win
		{nil, n(2500000000), 2500 * time.Millisecond},
		{f(1e-9), nil, time.Nanosecond},
		{f(math.NaN()), n(3), 3},
		{nil, nil, 0},
	} {
		if got := Duration(c.s, c.ns); got != c.want {
			t.Errorf("Duration(%v, %v) = %v, want %v", c.s, c.ns, got, c.want)
		}
	}
	if Of(90*time.Second) != 90 {
		t.Error("Of")
	}
}

// record is a record with durations, as labmate's are: the durations out of its own encoding.
type record struct {
	Name    string        `json:"name"`
	Took    time.Duration `json:"-"`
	Elapsed time.Duration `json:"-"`
}

func (r record) MarshalJSON() ([]byte, error) {
	type plain record
	return Marshal(plain(r), F("took", &r.Took), Field{Name: "elapsed", D: &r.Elapsed, OmitZero: true})
}

func (r *record) UnmarshalJSON(b []byte) error {
	type plain record
	return Unmarshal(b, (*plain)(r), F("took", &r.Took), F("elapsed", &r.Elapsed))
}

// TestJSON: Marshal writes what a struct embedding the record and its NAME_s fields wrote,
// byte for byte; Unmarshal reads it back, and an older record's NAME_ns.
func TestJSON(t *testing.T) {
	r := record{Name: "a<b", Took: 1500 * time.Millisecond}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	type plain record
	want, _ := json.Marshal(struct {
		plain
		TookS    float64  `json:"took_s"`
		ElapsedS *float64 `json:"elapsed_s,omitempty"`
	}{plain(r), 1.5, nil})
	if string(b) != string(want) {
		t.Errorf("Marshal: %s, want %s", b, want)
	}
	for in, want := range map[string]record{
		string(b): r,
		`{"name":"x","took_ns":2000000000,"elapsed_s":0.25}`: {Name: "x", Took: 2 * time.Second, Elapsed: 250 * time.Millisecond},
		`{"name":"y","took_s":1,"took_ns":7,"Elapsed_S":2}`:  {Name: "y", Took: time.Second, Elapsed: 2 * time.Second},
		`{}`: {},
	} {
		var got record
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("Unmarshal %s = %+v, %v; want %+v", in, got, err, want)
		}
	}
	var got record
	if err := json.Unmarshal([]byte(`{"took_s":"1s"}`), &got); err == nil {
		t.Error(`Unmarshal {"took_s":"1s"}: no error`)
	}
	if b, err := Marshal(struct{}{}, F("took", &r.Took)); err != nil || string(b) != `{"took_s":1.5}` {
		t.Errorf("Marshal of an empty object: %s, %v", b, err)
	}
	if _, err := Marshal(3, F("took", &r.Took)); err == nil {
		t.Error("Marshal of a number: no error")
	}
}
