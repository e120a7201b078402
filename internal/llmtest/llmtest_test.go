package llmtest_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dsh-actors/dsh-actors/internal/llmtest"
	"github.com/dsh-actors/dsh-actors/modelagent/modelagenttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAResponseReadsBackAsItsChunks(t *testing.T) {
	require.Len(t, llmtest.Chunks(modelagenttest.Say("x")), 5)
}
