package modelagent

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/dsh-actors/dsh-actors/actors/parent"
	"github.com/dsh-actors/dsh-actors/agent"
	"github.com/dsh-actors/dsh-actors/event"
	"github.com/dsh-actors/dsh-actors/internal/llm"
	"github.com/dsh-actors/dsh-actors/internal/vocab"
	"github.com/dsh-actors/dsh-actors/session"
)

// outputInstruction is appended to the system prompt of an agent asked
// for a structured answer when the server cannot be given the schema.
const outputInstruction = "\n\nEnd with a final answer that is only a JSON value (no prose, no code fence) valid against this JSON Schema:\n"

// structuredPlugin is the source plugin of the message that asks a model
// again for a structured answer.
const structuredPlugin = "structured-output"

// structuredCheck decides what follows a completed turn of an agent asked
// for a structured answer: nil when its final text is valid JSON against
// the schema; otherwise, the first time, it logs the message that asks
// again (a user/message from the plugin "structured-output", on the
// conversation the next step sends); the second time, the error that ends
// the turn.
func (l *loop) structuredCheck(self *parent.Handle) (again bool, err error) {
	if len(l.opts.OutputSchema) == 0 {
		return false, nil
	}
	violations := l.outputViolations(l.lastText)
	if violations == "" {
		return false, nil
	}
	if l.reasked {
		return false, errors.New("modelagent: the answer is still not valid against the output schema after one repair: " + violations)
	}
	if self == nil {
		return false, errors.New("modelagent: cannot ask again for a structured answer: the agent is not live: " + violations)
	}
	l.reasked = true
	msg := event.UserMessage{Content: event.Text("Your answer is not valid against the output schema: " + violations +
		". Answer again with only the JSON value, valid against the schema."),
		Source: event.Source{Kind: "plugin", Plugin: structuredPlugin}, Role: event.RoleUser, ID: uuid.NewString()}
	if _, err := self.Session().Append(vocab.TypeUserMessage, msg, session.Surface()); err != nil {
		return false, err
	}
	return true, nil
}

// outputViolations is "" when text (a ```json fence allowed) is JSON
// valid against the output schema, else what is wrong with it.
func (l *loop) outputViolations(text string) string {
	schema, err := compileSchema(l.opts.OutputSchema)
	if err != nil {
		return "the output schema does not compile: " + err.Error()
	}
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "```"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(rest, "json"), "```"))
	}
	v := parseArguments(text)
	if s, isString := v.(string); isString && s == text && !json.Valid([]byte(text)) {
		return "it is not JSON"
	}
	if err := schema.Validate(v); err != nil {
		return err.Error()
	}
	return ""
}

// withOutputSchema asks for the structured answer in req: as
// response_format where the server takes it (the openai profile), else
// by instructing the model in the system prompt.
func (l *loop) withOutputSchema(header *vocab.Header, req *llm.Request) {
	if len(l.opts.OutputSchema) == 0 {
		return
	}
	if p, ok := l.a.client.(llm.Profiler); ok && p.Profile() == llm.ProfileOpenAI {
		req.OutputSchema = l.opts.OutputSchema
		return
	}
	header.System += outputInstruction + string(l.opts.OutputSchema)
	req.System = header.System
}

// endStructured is how RunTurn ends or goes on after a completed turn.
func (l *loop) endStructured(self *parent.Handle, stop agent.StopReason) (next bool, end agent.StopReason, err error) {
	if stop != agent.Completed {
		return false, stop, nil
	}
	again, err := l.structuredCheck(self)
	if err != nil {
		return false, agent.Error, err
	}
	return again, stop, nil
}
