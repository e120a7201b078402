package main

import (
	"testing"

	"github.com/dsh-actors/dsh-actors/internal/pgtest"
)

// cluster is the private Postgres server of export, import and
// --store postgres://; pgtest.Main also checks for leaked goroutines.
var cluster *pgtest.Cluster

func TestMain(m *testing.M) { pgtest.Main(m, &cluster) }
