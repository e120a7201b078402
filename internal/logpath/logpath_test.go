package logpath

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEncodeSegmentAndProjectKey(t *testing.T) {
	segments := []struct{ in, want string }{
		{"a/b", "a~002Fb"},
		{"/etc/passwd", "~002Fetc~002Fpasswd"},
		{"a~b", "a~007Eb"},
		{"plain-ID_1.2", "plain-ID_1.2"},
		{".", "~002E"},
		{"..", "~002E~002E"},
		{"~002F", "~007E002F"},
		{"开", "~5F00"},
		{"😀", "~D83D~DE00"},
	}
	for _, c := range segments {
		got, err := EncodeSegment(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	_, err := EncodeSegment("")
	require.EqualError(t, err, "cannot encode an empty path segment")
	require.ErrorIs(t, err, ErrInvalid)

	projects := []struct{ in, want string }{
		{"/Users/qyj/work/deepseek-harness", "--Users-qyj-work-deepseek-harness--"},
		{`C:\work\agent`, "--C-work-agent--"},
		{"/开发/~agent", "--~5F00~53D1-~007Eagent--"},
		{"/", "--root--"},
		{"/a/", "--a---"},
		{"/a/b-c", "--a-b-c--"},
		{"/a-b/c", "--a-b-c--"},
		{"//a::\\b", "--a-b--"},
	}
	for _, c := range projects {
		got, err := projectKey(c.in)
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
	long, err := projectKey("/" + string(make([]byte, 0)) + repeat("x", 400))
	require.NoError(t, err)
	require.Len(t, long, 255)
	require.Equal(t, "--"+repeat("x", 251)+"--", long)
	_, err = projectKey("")
	require.EqualError(t, err, "cannot encode an empty project path")
}

func repeat(s string, n int) string {
	out := make([]byte, 0, len(s)*n)
	for range n {
		out = append(out, s...)
	}
	return string(out)
}

func TestLeaseFileNames(t *testing.T) {
	require.Equal(t, ".session-owner.0a1b", OwnerFileName("0a1b"))
	for _, name := range []string{"session.lease", ".session-leases", ".session-owner.0a1b"} {
		require.True(t, IsLeaseFile(name), name)
	}
	for _, name := range []string{"session.jsonl", "session.inbox", ".session-ownerx", "_no-cwd"} {
		require.False(t, IsLeaseFile(name), name)
	}
}
