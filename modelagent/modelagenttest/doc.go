// Package modelagenttest is a mock model for the model agent, as
// net/http/httptest is a mock server for net/http: an OpenAI-compatible
// chat-completions server on loopback that answers each request with the
// next scripted Reply (Say streams text, CallTools streams tool calls,
// Status answers a failure), so that a test or an example runs the model
// agent without a key or a network. Point modelagent.Config's BaseURL at
// Server.URL and give it any APIKey.
//
// Each request is recorded before it is answered; Received returns the
// requests in arrival order. Once the script is exhausted the server
// answers 500. Close the server when done.
package modelagenttest
