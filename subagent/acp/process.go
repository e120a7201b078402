package acp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/dsh-actors/dsh-actors/internal/childenv"
)

// process is an agent process whose stdin and stdout are pipes this
// process holds the other ends of.
type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // written by the connection; closed to end the agent
	stdout *os.File // read by the connection until the agent's end closes
	exited chan struct{}
	err    error // the process's exit, once exited is closed
}

// startProcess starts cfg.Command in dir in a process group of its own.
// It blocks until the process started.
func startProcess(cfg Config, dir string) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, errors.Join(err, inR.Close(), inW.Close())
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir, cmd.Env = dir, append(childenv.Scrubbed(), cfg.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, cfg.Stderr
	ownProcessGroup(cmd)
	startErr := cmd.Start()
	closeErr := errors.Join(inR.Close(), outW.Close())
	if startErr != nil {
		return nil, errors.Join(fmt.Errorf("subagent/acp: start %s: %w", cfg.Command, startErr), closeErr, inW.Close(), outR.Close())
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// end closes the agent's stdin and waits grace for the agent to exit;
// then it asks its process group to stop (SIGTERM) and waits grace again;
// then it kills the group, whatever is left of it, and closes this side's
// pipe ends once the agent is reaped. It blocks until then and returns nil
// or the pipe's close error: how the agent exited is not the run's
// failure.
func (p *process) end(grace time.Duration) error {
	_ = p.stdin.Close()
	if !p.exitsWithin(grace) {
		terminateProcessGroup(p.cmd)
		p.exitsWithin(grace)
	}
	p.kill()
	<-p.exited
	return p.stdout.Close()
}

// exitsWithin waits up to d for the agent to exit and reports whether it
// did.
func (p *process) exitsWithin(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// kill kills the agent's process group (what it started too); it does not
// wait.
func (p *process) kill() { killProcessGroup(p.cmd) }
