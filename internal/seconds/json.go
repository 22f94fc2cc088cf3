package seconds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"
)

// A Field is one duration of a JSON record, kept out of the record's own encoding (json:"-"):
// Marshal writes it in seconds as NAME_s, Unmarshal reads NAME_s or, from a record written
// before durations were seconds, NAME_ns.
type Field struct {
	Name     string         // NAME, without the unit: "duration", "elapsed", "wall_time"
	D        *time.Duration // the record's field
	OmitZero bool           // NAME_s is left out when the duration is 0
}

// F is the Field name of *d.
func F(name string, d *time.Duration) Field { return Field{Name: name, D: d} }

// Marshal is the JSON object of v with each field after its own, in seconds: the MarshalJSON of
// a record with durations. v is the record as a type without that method (type plain R;
// plain(r)), so that it does not call itself.
func Marshal(v any, fields ...Field) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil, fmt.Errorf("seconds: %T is not written as a JSON object", v)
	}
	var out bytes.Buffer
	out.Write(b[:len(b)-1])
	empty := len(b) == 2
	for _, f := range fields {
		if f.OmitZero && *f.D == 0 {
			continue
		}
		s, err := json.Marshal(Of(*f.D))
		if err != nil {
			return nil, err
		}
		if !empty {
			out.WriteByte(',')
		}
		empty = false
		fmt.Fprintf(&out, "%q:%s", f.Name+"_s", s)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Unmarshal decodes the JSON object b into v, the record as a type without an UnmarshalJSON
// method (type plain R; (*plain)(r)), and each field from NAME_s, or NAME_ns, as Duration
// reads them: the UnmarshalJSON of a record with durations.
func Unmarshal(b []byte, v any, fields ...Field) error {
	if err := json.Unmarshal(b, v); err != nil {
		return err
	}
	// The fields' members, decoded as encoding/json matches names: NAME_s, then NAME_ns.
	members := make([]reflect.StructField, 0, 2*len(fields))
	for i, f := range fields {
		members = append(members,
			reflect.StructField{Name: fmt.Sprintf("S%d", i), Type: reflect.TypeFor[*float64](), Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, f.Name+"_s"))},
			reflect.StructField{Name: fmt.Sprintf("NS%d", i), Type: reflect.TypeFor[*int64](), Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, f.Name+"_ns"))})
	}
	d := reflect.New(reflect.StructOf(members))
	if err := json.Unmarshal(b, d.Interface()); err != nil {
		return err
	}
	for i, f := range fields {
		s, _ := d.Elem().Field(2 * i).Interface().(*float64)
		ns, _ := d.Elem().Field(2*i + 1).Interface().(*int64)
		*f.D = Duration(s, ns)
	}
	return nil
}
