package fault

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAnErrorMatchesItsCodeHoweverWrapped(t *testing.T) {
	cause := errors.New("disk gone")
	err := New(DurabilityFailed, `subagent "c1" durability checkpoint failed: disk gone`, cause)
	for _, wrapped := range []error{
		err,
		fmt.Errorf("outer: %w", err),
		errors.Join(errors.New("other"), err),
	} {
		require.ErrorIs(t, wrapped, DurabilityFailed)
		require.ErrorIs(t, wrapped, &Error{Code: DurabilityFailed})
		require.NotErrorIs(t, wrapped, Draining)
		require.ErrorIs(t, wrapped, cause)
		require.Equal(t, DurabilityFailed, CodeOf(wrapped))
	}
	require.Equal(t, `subagent "c1" durability checkpoint failed: disk gone`, err.Error())
	require.Equal(t, "DRAINING", New(Draining, "", nil).Error())
	require.Equal(t, Code(""), CodeOf(cause))
	require.Equal(t, Code(""), CodeOf(nil))
}
