package subagent

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
)

// structured settles a completed one-shot result requested with schema:
// the final text, trimmed of a ```json fence, must be JSON valid against
// schema; it becomes Result.Structured. An answer that is not is an error
// stop, its text kept as the output.
func structured(result Result, schema json.RawMessage) Result {
	if len(schema) == 0 || result.StopReason != agent.Completed {
		return result
	}
	text := stripFence(event.TextOf(result.Output))
	if validAgainst(schema, text) {
		result.Structured = json.RawMessage(text)
		return result
	}
	result.StopReason = agent.Error
	return result
}

// stripFence is text without surrounding space and a ``` or ```json fence.
func stripFence(text string) string {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		rest = strings.TrimPrefix(rest, "json")
		if body, ok := strings.CutSuffix(rest, "```"); ok {
			return strings.TrimSpace(body)
		}
	}
	return text
}

// validAgainst reports whether text is a JSON value valid against schema.
func validAgainst(schema json.RawMessage, text string) bool {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return false
	}
	c := jsonschema.NewCompiler()
	if c.AddResource("mem://output.json", doc) != nil {
		return false
	}
	compiled, err := c.Compile("mem://output.json")
	if err != nil {
		return false
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	return err == nil && compiled.Validate(v) == nil
}
