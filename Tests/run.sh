#!/usr/bin/env bash
# The whole test suite, as CI runs it, in two test processes at once:
#  - the tracker's suites (FaceTrackingTests), which are bound by CPU and whose results depend only on
#    the frames (detection on the frame thread or gated), at the lowest priority (nice 19);
#  - every other suite, whose relays run in real time and leave a third of the CPU idle waiting on
#    the clock.
# The tracker's tests so use the CPU the relays leave idle and never what a relay needs to keep up.
# Each process runs its tests one at a time (`--no-parallel`); the tracker's lines are marked
# "[tracker]". Both share the fixture folder (its scripts lock it while they write).
#
#   Tests/run.sh        builds the tests, runs both; exits non-zero if either failed
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
tracker='^FaceTrackingTests\.'
# The builds only the relay suites need are started by that process alone.
(FACERELAY_BACKGROUND_BUILDS=0 nice -n 19 swift test --skip-build --ignore-lock --no-parallel --filter "$tracker" 2>&1 | sed -u 's/^/[tracker] /') &
tracker_run=$!
# A script's background commands ignore Ctrl-C: an interrupted run ends both.
trap 'trap - INT TERM; kill -TERM 0; exit 130' INT TERM
status=0
swift test --skip-build --ignore-lock --no-parallel --skip "$tracker" || status=$?
wait "$tracker_run" || status=$?
exit "$status"
