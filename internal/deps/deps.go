//go:build tools

// Package deps pins the module's chosen dependencies while the packages that
// use them are being written, so that `go mod tidy` keeps them.
package deps

import (
	_ "github.com/asynkron/protoactor-go/actor"
	_ "github.com/chromedp/chromedp"
	_ "github.com/google/uuid"
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/goleak"
)
