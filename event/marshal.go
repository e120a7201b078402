package event

import "github.com/dsh-actors/dsh-actors/internal/jsjson"

// Marshal writes v as JSON.stringify(v) writes it, so that a program
// printing values beside what a session log holds prints them alike:
// compact, a struct's keys in field order, and '<', '>', '&', U+2028 and
// U+2029 raw where encoding/json escapes them. Indenting the result with
// json.Indent keeps those characters raw. It does not block.
func Marshal(v any) ([]byte, error) {
	return jsjson.Marshal(v)
}
