// Package pgtest runs a private PostgreSQL server for one test binary:
// Debian's binaries (/usr/lib/postgresql/*/bin, else PATH), initdb into a
// temporary folder, the server on a free loopback port with its unix
// socket in that folder, and one fresh database per test. Without the
// binaries the tests that ask for a database skip, naming what is
// missing; under CI=true the binary fails instead.
//
// Use it from TestMain:
//
//	var cluster *pgtest.Cluster
//
//	func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }
//
// and in a test: dsn := cluster.Database(t).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// superuser is the role initdb creates; the cluster trusts loopback.
const superuser = "dsh"

// Cluster is one running private server. A nil *Cluster, or one whose
// start failed, makes Database skip the test with the reason.
type Cluster struct {
	dir     string // temporary folder: data/, the socket, server.log
	port    int
	server  *exec.Cmd
	exited  chan struct{}
	reason  error // why there is no server (nil when it runs)
	counter atomic.Int64
}

// Main starts the cluster, runs the tests, stops the cluster and removes
// its folder, then checks for leaked goroutines (goleak) and exits. When
// the binaries are missing or the start fails, *c gets a Cluster whose
// Database skips; under CI=true the process exits 1 instead.
func Main(m *testing.M, c **Cluster) {
	cluster, err := Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		if os.Getenv("CI") == "true" {
			os.Exit(1)
		}
		cluster = &Cluster{reason: err}
	}
	*c = cluster
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stop: %v\n", err)
		code = max(code, 1)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Start initializes and starts a server; it blocks until the server takes
// connections (at most a minute).
func Start() (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir}
	cred, err := c.credential()
	if err == nil {
		err = c.initdb(bin, cred)
	}
	if err == nil {
		err = c.startServer(bin, cred)
	}
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// binDir finds the folder holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin, else the folder of initdb on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errors.New("postgres binaries not found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH); " +
		"install Debian's postgresql package to run the Postgres tests")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func isExecutable(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && info.Mode()&0o111 != 0
}

// credential returns who runs initdb and the server: PostgreSQL refuses
// to run as root, so root hands the folder to the postgres account.
func (c *Cluster) credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root needs the postgres account to run the server: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(c.dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (c *Cluster) command(bin string, cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

func (c *Cluster) initdb(bin string, cred *syscall.Credential) error {
	cmd := c.command(bin, cred, "initdb", "-D", filepath.Join(c.dir, "data"), "-U", superuser,
		"-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb: %w\n%s", err, out)
	}
	return nil
}

// startServer runs postgres on a free loopback port (trying another port
// when the one picked was taken meanwhile) and waits until it answers.
func (c *Cluster) startServer(bin string, cred *syscall.Credential) error {
	var err error
	for range 3 {
		if c.port, err = freePort(); err != nil {
			return err
		}
		if err = c.runServer(bin, cred); err == nil {
			return nil
		}
	}
	return err
}

func (c *Cluster) runServer(bin string, cred *syscall.Credential) error {
	logPath := filepath.Join(c.dir, "server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	if cred != nil {
		_ = logFile.Chown(int(cred.Uid), int(cred.Gid))
	}
	cmd := c.command(bin, cred, "postgres", "-D", filepath.Join(c.dir, "data"),
		"-p", strconv.Itoa(c.port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	c.server, c.exited = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(c.exited) }()
	if err := c.awaitReady(); err != nil {
		_ = c.stopServer()
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("postgres did not start: %w\n%s", err, log)
	}
	return nil
}

// awaitReady connects until the server answers, it exits or a minute
// passes.
func (c *Cluster) awaitReady() error {
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, c.dsn("postgres"))
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		select {
		case <-c.exited:
			return errors.New("the server exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dsn is the connection string of database db over loopback TCP.
func (c *Cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.port, db)
}

// Stop shuts the server down (fast shutdown) and removes its folder. It
// is idempotent; a nil Cluster or one that never ran has nothing to stop.
func (c *Cluster) Stop() error {
	if c == nil || c.dir == "" {
		return nil
	}
	err := c.stopServer()
	if rerr := os.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	c.dir = ""
	return err
}

func (c *Cluster) stopServer() error {
	if c.server == nil {
		return nil
	}
	defer func() { c.server = nil }()
	_ = c.server.Process.Signal(syscall.SIGINT)
	select {
	case <-c.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = c.server.Process.Kill()
		<-c.exited
		return errors.New("postgres did not stop within 30s after SIGINT; killed")
	}
}

// Database creates a fresh, empty database for t, dropped when t ends,
// and returns its connection string. Without a server it skips t with
// the reason.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	if c == nil || c.server == nil {
		reason := errors.New("no postgres cluster was started")
		if c != nil && c.reason != nil {
			reason = c.reason
		}
		t.Skipf("postgres unavailable: %v", reason)
	}
	name := fmt.Sprintf("t%d_%s", c.counter.Add(1), sanitize(t.Name()))
	c.admin(t, `CREATE DATABASE "`+name+`" TEMPLATE template0`)
	t.Cleanup(func() { c.admin(t, `DROP DATABASE "`+name+`" WITH (FORCE)`) })
	return c.dsn(name)
}

// admin runs one statement on the maintenance database.
func (c *Cluster) admin(t testing.TB, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// sanitize keeps a test name usable inside a database name (at most 63
// bytes in all).
func sanitize(name string) string {
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, strings.ToLower(name))
	if len(name) > 40 {
		name = name[:40]
	}
	return name
}
