// Package modelagenttest is a mock model for the model agent, as
// net/http/httptest is a mock server for net/http: an OpenAI-compatible
// chat-completions server on loopback that streams scripted Responses
// (Say, CallTools, or any Response) and answers failures (Status,
// RateLimited), so that a test or an example runs the model agent without
// a key or a network. Point modelagent.Config's BaseURL at Server.URL and
// give it any APIKey.
//
// Each request takes the next Behavior of the server's script (or of the
// first Route that matches it) and is recorded; Received returns the
// requests in arrival order. Close the server when done.
package modelagenttest
