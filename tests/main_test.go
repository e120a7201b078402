// Package tests holds cross-package integration, stress, leak and
// acceptance tests (test files only).
package tests

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
