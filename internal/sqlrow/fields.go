package sqlrow

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memstore/memstore"
	"github.com/memstore/memstore/internal/keyset"
)

// byFields is the kind whose row is fields of its records, in the order
// of the table's columns (Select): each field is where its column scans
// to and what it writes, a pointer to a string, an int64, an int, a bool
// or a list, or one of the fields below for a column kept otherwise than
// its Go type.
func byFields[T any](t *Table, fields func(*T) []any, put func(memstore.RecordSink, *T) error) *kind[T] {
	written := strings.Count(t.Columns, ",") + 1
	return &kind[T]{table: t, put: put,
		scan: func(r Row) (*T, error) {
			var rec T
			return &rec, r.Scan(fields(&rec)...)
		},
		values: func(rec *T) ([]any, error) {
			values := fields(rec)[:written]
			for i, f := range values {
				v, err := value(f)
				if err != nil {
					return nil, err
				}
				values[i] = v
			}
			return values, nil
		},
	}
}

// value is what field f writes.
func value(f any) (any, error) {
	switch f := f.(type) {
	case driver.Valuer:
		return f.Value()
	case *string:
		return *f, nil
	case *int64:
		return *f, nil
	case *int:
		return *f, nil
	case *bool:
		return *f, nil
	case *[]string:
		return *f, nil
	}
	return nil, fmt.Errorf("sqlrow: no value for a field of type %T", f)
}

// nanos is a time, kept as unix nanoseconds (keyset.Nanos).
type nanos struct{ t *time.Time }

func (f nanos) Scan(src any) error {
	n, err := integer(src)
	*f.t = keyset.Time(n)
	return err
}

func (f nanos) Value() (driver.Value, error) { return keyset.Nanos(*f.t), nil }

// nullNanos is a time that may be none, kept as NULL.
type nullNanos struct{ t **time.Time }

func (f nullNanos) Scan(src any) error {
	*f.t = nil
	if src == nil {
		return nil
	}
	n, err := integer(src)
	t := keyset.Time(n)
	*f.t = &t
	return err
}

func (f nullNanos) Value() (driver.Value, error) { return nullable(keyset.NullNanos(*f.t)), nil }

// zeroNanos is a time that may be none, kept as 0.
type zeroNanos struct{ t **time.Time }

func (f zeroNanos) Scan(src any) error {
	n, err := integer(src)
	*f.t = nil
	if n != 0 {
		t := keyset.Time(n)
		*f.t = &t
	}
	return err
}

func (f zeroNanos) Value() (driver.Value, error) {
	if *f.t == nil {
		return int64(0), nil
	}
	return keyset.Nanos(**f.t), nil
}

// zeroNull is a number kept as NULL when 0.
type zeroNull struct{ n *int64 }

func (f zeroNull) Scan(src any) (err error) {
	*f.n = 0
	if src != nil {
		*f.n, err = integer(src)
	}
	return err
}

func (f zeroNull) Value() (driver.Value, error) {
	if *f.n == 0 {
		return nil, nil
	}
	return *f.n, nil
}

// emptyNull is a string kept as NULL when "".
type emptyNull struct{ s *string }

func (f emptyNull) Scan(src any) (err error) {
	*f.s = ""
	if src != nil {
		*f.s, err = str(src)
	}
	return err
}

func (f emptyNull) Value() (driver.Value, error) { return nullIfEmpty(*f.s), nil }

// byteText is text that PostgreSQL keeps as bytea, so that it may hold
// a NUL: it writes bytes (text).
type byteText struct{ s *string }

func (f byteText) Scan(src any) (err error) {
	*f.s, err = str(src)
	return err
}

func (f byteText) Value() (driver.Value, error) { return text(*f.s), nil }

// jsonMap is metadata or fields, kept as their JSON text; null reads as
// an empty map.
type jsonMap[V any] struct{ m *map[string]V }

func (f jsonMap[V]) Scan(src any) error {
	s, err := str(src)
	if err != nil {
		return err
	}
	*f.m = nil
	if err := json.Unmarshal([]byte(s), f.m); err != nil {
		return err
	}
	if *f.m == nil {
		*f.m = map[string]V{}
	}
	return nil
}

func (f jsonMap[V]) Value() (driver.Value, error) {
	b, err := json.Marshal(*f.m)
	return string(b), err
}

// rawJSON is a JSON value kept as its text, as it was given.
type rawJSON struct{ b *json.RawMessage }

func (f rawJSON) Scan(src any) error {
	s, err := str(src)
	*f.b = json.RawMessage(s)
	return err
}

func (f rawJSON) Value() (driver.Value, error) { return string(*f.b), nil }

// enumField is a string of a named type, such as a role or a state.
type enumField[S ~string] struct{ s *S }

func enum[S ~string](s *S) enumField[S] { return enumField[S]{s} }

func (f enumField[S]) Scan(src any) error {
	s, err := str(src)
	*f.s = S(s)
	return err
}

func (f enumField[S]) Value() (driver.Value, error) { return string(*f.s), nil }

// integer is an integer column's value, as both drivers give it.
func integer(src any) (int64, error) {
	if n, ok := src.(int64); ok {
		return n, nil
	}
	return 0, fmt.Errorf("sqlrow: %T where an integer is kept", src)
}

// str is a text column's value, as both drivers give it.
func str(src any) (string, error) {
	switch s := src.(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	}
	return "", fmt.Errorf("sqlrow: %T where text is kept", src)
}

// text is the value of text that PostgreSQL keeps as bytea: never nil,
// which would be NULL.
func text(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// nullIfEmpty is the value of a string kept as NULL when "".
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullable is the value of a number that may be none.
func nullable(n *int64) any {
	if n == nil {
		return nil
	}
	return *n
}

// deref is the string p points to, "" for NULL.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// jsonValue is a value kept as its JSON text; a nil pointer or slice is
// kept as NULL, and NULL reads as one.
type jsonValue[T any] struct{ v *T }

func (f jsonValue[T]) Scan(src any) error {
	var zero T
	*f.v = zero
	if src == nil {
		return nil
	}
	s, err := str(src)
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(s), f.v)
}

func (f jsonValue[T]) Value() (driver.Value, error) {
	b, err := json.Marshal(*f.v)
	if err != nil || string(b) == "null" {
		return nil, err
	}
	return string(b), nil
}
