package memorytool

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"testing"
)

// scanSeeds are tool inputs and near misses for the comparison of
// decodeObject with json.Unmarshal.
var scanSeeds = []string{
	`{"command":"view","path":"/memories"}`,
	` {"command" : "view" , "path":"/memories/a.md","view_range":[1, -1]} ` + "\n",
	`{"command":"create","path":"/memories/x","file_text":"a\nb \"q\" \\ \/ \b\f\r\t \u00e9 \uD83D\uDE00"}`,
	`{"command":"insert","path":"/memories/x","insert_line":2,"insert_text":"t"}`,
	`{"command":"insert","insert_line":-0.5e+3,"insert_line":1E2,"x":[[],{},{"a":[null,true,false]}]}`,
	`{}`, `{ }`, `[]`, `null`, `""`, `1`, `{"a":1}x`, `{"a":1}}`, `{"a":1,}`, `{,"a":1}`,
	`{"a" 1}`, `{"a":}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":+1}`,
	`{"a":"\x"}`, `{"a":"\u12G4"}`, `{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff\xfe" + `"}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":{"b"}}`, `{"a":{1:2}}`,
	`{"comm\u0061nd":"view"}`, `{"command":"view","command":"delete"}`, `{"a":"b"`, `{"a`,
	`{"` + "\xff" + `":1}`, "{\"a\":1}\x00", `{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
}

// TestScanObjectMatchesUnmarshal: decodeObject accepts exactly what
// json.Unmarshal into a map accepts, with the same members (the last of
// a repeated name), on the seeds and on random mutations of them.
func TestScanObjectMatchesUnmarshal(t *testing.T) {
	check := func(input []byte) { t.Helper(); checkScanObject(t, input) }
	r := rand.New(rand.NewPCG(29, 1))
	alphabet := []byte("{}[]\":,\\ \n0123456789-+.eEabcdefnrtulsu\x01\xff")
	for _, seed := range scanSeeds {
		check([]byte(seed))
		for range 2000 {
			b := []byte(seed)
			for range 1 + r.IntN(3) {
				i := r.IntN(len(b) + 1)
				switch r.IntN(3) {
				case 0: // insert
					b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
				case 1: // delete
					if i < len(b) {
						b = append(b[:i], b[i+1:]...)
					}
				default: // replace
					if i < len(b) {
						b[i] = alphabet[r.IntN(len(alphabet))]
					}
				}
			}
			check(b)
		}
	}
}

// checkScanObject fails t unless decodeObject takes input as
// json.Unmarshal into a map does.
func checkScanObject(t *testing.T, input []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	wantOK := json.Unmarshal(input, &want) == nil && want != nil
	fields, ok := decodeObject(input)
	if ok != wantOK {
		t.Fatalf("%q: decodeObject ok %v, json.Unmarshal ok %v", input, ok, wantOK)
	}
	if !ok {
		return
	}
	got := make(map[string]json.RawMessage)
	for _, f := range fields {
		got[f.name] = f.raw
	}
	if !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatalf("%q: members %q, json.Unmarshal %q", input, got, want)
	}
}

// FuzzScanObject holds the tool's own JSON splitting to json.Unmarshal's
// on any input: the input comes from a model, and a difference would let
// one command mean two things.
func FuzzScanObject(f *testing.F) {
	for _, seed := range scanSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(checkScanObject)
}

// TestScanObjectTakesCommonInput: the common tool input is split by
// scanObject itself, not left to json.Unmarshal.
func TestScanObjectTakesCommonInput(t *testing.T) {
	for _, seed := range scanSeeds[:5] {
		if _, ok := scanObject([]byte(seed)); !ok {
			t.Errorf("%q: left to json.Unmarshal", seed)
		}
	}
}

// TestUnquoteMatchesUnmarshal: unquote decodes a JSON string as
// json.Unmarshal does: escapes, surrogate pairs, lone and broken
// surrogates, invalid UTF-8, on fixed cases and random strings.
func TestUnquoteMatchesUnmarshal(t *testing.T) {
	cases := []string{
		`""`, `"plain"`, `"a\nb\tc\r\"q\" \\ \/ \b\f"`, `"\u00e9\u00E9 \u65e5"`, `"\ud83d\ude00"`,
		`"\uD83D\uDE00x"`, `"\ud800"`, `"\ud800x"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\ud800\ud800\udc00"`,
		`"\udfff"`, `"\u0000"`, "\"\xff\xfe\"", "\"\xe2\x80\"", "\"\xed\xa0\x80\"", "\"é\xc3\"", `"\u2028\u2029"`,
	}
	r := rand.New(rand.NewPCG(29, 3))
	for range 5000 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		raw, _ := json.Marshal(string(b))
		cases = append(cases, string(raw))
		var esc []byte
		esc = append(esc, '"')
		for range r.IntN(4) {
			esc = append(esc, []byte([]string{`\ud83d`, `\ude00`, `\u0041`, `\n`, `x`, "\xff", `\\`, `\uDBFF`, `\uDFFF`}[r.IntN(9)])...)
		}
		cases = append(cases, string(append(esc, '"')))
	}
	for _, c := range cases {
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if got, ok := unquote([]byte(c)); !ok || got != want {
			t.Fatalf("%q: unquote %q (%v), json.Unmarshal %q", c, got, ok, want)
		}
	}
}
