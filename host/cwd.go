package host

import (
	"path/filepath"
	"strings"
)

// requestedCwd adds the issues of a cwd session.create was asked for: it
// must be an absolute path, and inside root when root is set (see
// withinRoot). An empty value or one with a NUL has its issue already.
func (p *payload) requestedCwd(name, value, root string) {
	if value == "" || strings.IndexByte(value, 0) >= 0 {
		return
	}
	if !filepath.IsAbs(value) {
		p.add(issueInvalidValue, []any{name}, "must be an absolute path")
		return
	}
	if root != "" && !withinRoot(root, value) {
		p.add(issueInvalidValue, []any{name}, "must be inside "+root)
	}
}

// withinRoot reports whether the absolute path lies in root (or is root)
// once both are cleaned and the symbolic links of their existing parts
// are resolved, so that neither ".." nor a link inside root that points
// out of it escapes.
func withinRoot(root, path string) bool {
	rel, err := filepath.Rel(resolved(root), resolved(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// resolved is the cleaned absolute path with the symbolic links of its
// longest resolvable prefix resolved; the rest (what does not exist yet,
// or cannot be read) is kept as written, cleaned.
func resolved(path string) string {
	path = filepath.Clean(path)
	missing := ""
	for {
		real, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(real, missing)
		}
		parent := filepath.Dir(path)
		if parent == path {
			return filepath.Join(path, missing)
		}
		missing = filepath.Join(filepath.Base(path), missing)
		path = parent
	}
}
