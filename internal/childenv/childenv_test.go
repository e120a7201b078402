package childenv_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/internal/childenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScrubbedDropsCredentialsAndHarnessNames: names holding KEY,
// PASSWORD, SECRET or TOKEN in any case and DSH_ names are left out;
// the rest are kept as they are.
func TestScrubbedDropsCredentialsAndHarnessNames(t *testing.T) {
	for name, value := range map[string]string{"AN_API_KEY": "k", "db_password": "p", "MY_SECRET_X": "s",
		"GH_TOKEN": "t", "DSH_ACTORS_HOME": "/h", "KEEP_ME": "a=b"} {
		t.Setenv(name, value)
	}
	env := childenv.Scrubbed()
	require.Contains(t, env, "KEEP_ME=a=b")
	for _, kv := range env {
		require.NotRegexp(t, `^(AN_API_KEY|db_password|MY_SECRET_X|GH_TOKEN|DSH_ACTORS_HOME)=`, kv)
	}
}
