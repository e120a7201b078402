// Package childenv is the environment a process this harness starts
// (an MCP server, an ACP agent) begins from: this process's own, minus
// credentials and minus this harness's identity.
package childenv

import (
	"os"
	"regexp"
	"strings"
)

// sensitiveName matches the environment names of credentials.
var sensitiveName = regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN`)

// Scrubbed is this process's environment without credential-shaped names
// (KEY, PASSWORD, SECRET, TOKEN, in any case) and without the DSH_ names
// of this harness's own identity: a child gets those only when its
// configuration gives them, deliberately, after these. It does not block.
func Scrubbed() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !sensitiveName.MatchString(name) && !strings.HasPrefix(name, "DSH_") {
			env = append(env, kv)
		}
	}
	return env
}
