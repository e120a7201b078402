#!/bin/sh
# stress_under_load.sh BIN [RUNS]: runs the child-first stress loop RUNS
# times (default 10) with two CPU hogs beside it, so that on a small
# machine the manager's goroutines are preempted at every step. Each run is
# bounded by a 120 s timeout; it exits 1 when any run failed.
set -u
bin=$1
runs=${2:-10}
yes >/dev/null &
hog1=$!
yes >/dev/null &
hog2=$!
trap 'kill $hog1 $hog2' EXIT
failed=0
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	timeout 120 "$bin" stress --forests 2 --fanout 3 --depth 2 --followups 600 --workers 16 --seed 718733291 || failed=$((failed + 1))
done
echo "stress under load: $failed of $runs runs failed"
[ "$failed" -eq 0 ]
