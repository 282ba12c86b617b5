package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// browserProcess is the launched $BROWSER; failed delivers an error if it
// exits unsuccessfully (the sign-in then fails at once instead of waiting
// for the timeout: useful in a benchmark, where no human can retry).
type browserProcess struct {
	failed <-chan error
	done   <-chan struct{}
}

// openBrowser runs $BROWSER with the URL as its last argument, the
// convention xdg-open and Python's webbrowser share. It is exec'd directly,
// not through a shell, so nothing in the URL is interpreted.
func openBrowser(url string) (*browserProcess, error) {
	words := strings.Fields(os.Getenv("BROWSER"))
	if len(words) == 0 {
		return nil, errors.New("set $BROWSER (the benchmark's scripted browser)")
	}
	cmd := exec.Command(words[0], append(words[1:], url)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	failed := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		if err := cmd.Wait(); err != nil {
			failed <- fmt.Errorf("browser %s: %v", words[0], err)
		}
		close(done)
	}()
	return &browserProcess{failed: failed, done: done}, nil
}

// reap waits briefly for the browser to exit, so no child is left behind;
// it has read the whole page by the time the exchange is done.
func (b *browserProcess) reap() {
	select {
	case <-b.done:
	case <-time.After(2 * time.Second):
	}
}
