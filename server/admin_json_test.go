package server

import (
	"math"
	"testing"
)

// jacksonJSON writes what Jackson's default pretty printer writes for the same values
// (the forms checked against ZooKeeper 3.8.0 by TestAdminJSONTextMatchesZooKeeper, and
// the rest as Jackson and Java's Double.toString define them).
func TestJacksonJSON(t *testing.T) {
	out := map[string]any{
		"error":   nil,
		"command": "x",
		"b":       []any{map[string]any{"k": 1}, map[string]any{}},
		"a":       map[string]any{"z": []int{1, 2}, "y": []string{}, "x": map[string]int{}},
		"c":       "tab\t<&> \"q\" \\ \x01 é",
		"d":       []float64{0, 1.5, 2, 1e7, 0.0005, -3.25},
		"e":       int64(-1),
		"f":       uint64(1) << 63,
		"g":       true,
		"h":       []any(nil),
		"i":       map[string]any(nil),
		"j":       map[int64]string{10: "a", 9: "b"},
		"k":       []float64{math.NaN(), math.Inf(1), math.Inf(-1)},
	}
	want := `{
  "a" : {
    "x" : { },
    "y" : [ ],
    "z" : [ 1, 2 ]
  },
  "b" : [ {
    "k" : 1
  }, { } ],
  "c" : "tab\t<&> \"q\" \\ \u0001 é",
  "d" : [ 0.0, 1.5, 2.0, 1.0E7, 5.0E-4, -3.25 ],
  "e" : -1,
  "f" : 9223372036854775808,
  "g" : true,
  "h" : null,
  "i" : null,
  "j" : {
    "10" : "a",
    "9" : "b"
  },
  "k" : [ "NaN", "Infinity", "-Infinity" ],
  "command" : "x",
  "error" : null
}`
	if got := string(jacksonJSON(out, false)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// An answer's keys in ZooKeeper's order, the ones it does not list after them, sorted.
	got := string(jacksonJSON(map[string]any{"command": "dirs", "error": nil, "zz": 1, "logdir_size": 2, "datadir_size": 3}, false))
	if want := "{\n  \"datadir_size\" : 3,\n  \"logdir_size\" : 2,\n  \"zz\" : 1,\n  \"command\" : \"dirs\",\n  \"error\" : null\n}"; got != want {
		t.Errorf("dirs: got\n%s\nwant\n%s", got, want)
	}
	// An error the command set itself stays among its own keys, before "command".
	got = string(jacksonJSON(map[string]any{"command": "leader", "error": "e"}, true))
	if want := "{\n  \"error\" : \"e\",\n  \"command\" : \"leader\"\n}"; got != want {
		t.Errorf("own error: got\n%s\nwant\n%s", got, want)
	}
	// Anything without a JSON form of its own is a programming error, not a silent
	// compact encoding.
	defer func() {
		if recover() == nil {
			t.Error("a struct was written")
		}
	}()
	jacksonJSON(map[string]any{"command": "x", "s": struct{ A int }{1}}, false)
}
