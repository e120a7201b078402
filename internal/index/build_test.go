package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/dsh-actors/dsh-actors/internal/logpath"
	"github.com/dsh-actors/dsh-actors/session"
)

// The build's cheaper spellings give, byte for byte, what the plain
// formulas they replace gave: titles, session folders, revisions and
// folder fingerprints are stored in the index and compared across
// processes.

func TestFirstRunesCutsAsARuneSlice(t *testing.T) {
	for _, s := range []string{"", "a", "héllo wörld", "日本語のタイトル", "\xff\xfeab", "ab\xffcd", "😀😀😀", "a\x80"} {
		for _, n := range []int{0, 1, 2, 3, 80} {
			runes := []rune(s)
			require.Equal(t, string(runes[:min(len(runes), n)]), firstRunes(s, n), "%q cut to %d", s, n)
		}
	}
}

func FuzzFirstRunes(f *testing.F) {
	f.Add("find the blue lagoon", 5)
	f.Add("\xffé", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = min(max(n, 0), 200)
		runes := []rune(s)
		got := firstRunes(s, n)
		if want := string(runes[:min(len(runes), n)]); got != want {
			t.Fatalf("firstRunes(%q, %d) = %q, want %q", s, n, got, want)
		}
		if !utf8.ValidString(s) && got != "" && !utf8.ValidString(got) {
			t.Fatalf("firstRunes(%q, %d) = %q is not valid UTF-8", s, n, got)
		}
	})
}

func TestSessionDirIsTheLogsFolderUnderTheRoot(t *testing.T) {
	for _, root := range []string{t.TempDir(), "/"} {
		r := reconciler{d: &DB{root: root}}
		for _, h := range []session.Header{
			{ID: "s1", Cwd: "/work"}, {ID: "s2", Cwd: ""}, {ID: ".", Cwd: "/"}, {ID: "..", Cwd: "C:\\x"},
			{ID: "a/b~c", Cwd: "/work"}, {ID: "日本", Cwd: "/tmp/ü"}, {ID: "s3", Cwd: "/work"},
		} {
			path, err := logpath.Path(root, h.Cwd, h.ID)
			require.NoError(t, err)
			want, err := filepath.Rel(root, filepath.Dir(path))
			require.NoError(t, err)
			got, err := r.sessionDir(h)
			require.NoError(t, err)
			require.Equal(t, want, got, "header %+v under %q", h, root)
		}
		_, err := r.sessionDir(session.Header{ID: "", Cwd: "/work"})
		require.Error(t, err, "an empty id names no folder")
	}
}

func TestRevisionsAndFingerprintsAreTheFormattedOnes(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "p", "s1"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "p", "s 2\"é"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "p", "file\n"), []byte("x"), 0o600))
	require.NoError(t, os.Symlink("s1", filepath.Join(root, "p", "link")))

	info, err := os.Stat(filepath.Join(root, "p", "file\n"))
	require.NoError(t, err)
	st := info.Sys().(*syscall.Stat_t)
	require.Equal(t, fmt.Sprintf("%d:%d:%d:%d.%d:%d.%d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec), statRevision(info))

	entries, err := os.ReadDir(filepath.Join(root, "p"))
	require.NoError(t, err)
	h := sha256.New()
	for _, e := range entries {
		fmt.Fprintf(h, "%d%q\n", e.Type(), e.Name())
	}
	piece, sessions, err := readProject(root, "p")
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(h.Sum(nil)), piece)
	require.ElementsMatch(t, []string{filepath.Join("p", "s1"), filepath.Join("p", "s 2\"é")}, sessions)
}
