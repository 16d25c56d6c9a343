#!/usr/bin/env bash
# Builds FaceRelay's libFuzzer targets (with AddressSanitizer) and runs each for SECONDS on its
# committed corpus (Tests/Fuzz/Corpus/TARGET) and dictionary.
#
#   Tests/Fuzz/fuzz.sh [SECONDS] [TARGET...]     SECONDS defaults to 60; TARGET to all of them:
#                                                sticker-json sticker-picture control-request serve-config
#   Tests/Fuzz/fuzz.sh 0                         builds them and runs none
#
# Inputs that reach new code are kept in .build/fuzz-corpus/TARGET (copy the interesting ones into
# the committed corpus); an input that crashes a target is written to .build/fuzz-artifacts/ and
# the script exits 1 once every target has run.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(sticker-json sticker-picture control-request serve-config)
build_path=.build/fuzz

started=$(date +%s)
for target in "${targets[@]}"; do
    [ -d "Tests/Fuzz/Targets/fuzz-$target" ] || { echo "fuzz.sh: no target '$target' in Tests/Fuzz/Targets" >&2; exit 2; }
    # FACERELAY_FUZZ=1 declares the fuzz targets in Package.swift; one product per build, the modules shared.
    # SwiftPM hands swiftc one -sanitize= flag per sanitizer, in no fixed order, and swiftc keeps only
    # the last: without the -Xswiftc flag after them, a build got either coverage or ASan in Swift code.
    FACERELAY_FUZZ=1 swift build --build-path "$build_path" --sanitize=fuzzer --sanitize=address --disable-index-store \
        -Xswiftc -sanitize=fuzzer,address --product "fuzz-$target" 2>&1 \
        | grep -v "warning: Cannot export local symbol" | tail -n 3
done
echo "== built in $(( $(date +%s) - started )) s"
[ "$seconds" -gt 0 ] || exit 0

mkdir -p .build/fuzz-artifacts
# The targets' scratch folders (sticker.json, frames) go here and are removed at the end.
export TMPDIR=$PWD/.build/fuzz-tmp
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
trap 'rm -rf "$TMPDIR"' EXIT
failed=()
for target in "${targets[@]}"; do
    corpus=.build/fuzz-corpus/$target
    log=.build/fuzz-artifacts/$target.log
    mkdir -p "$corpus"
    dictionary=()
    [ -f "Tests/Fuzz/Dictionaries/$target.dict" ] && dictionary=("-dict=Tests/Fuzz/Dictionaries/$target.dict")
    # Swift's own crash reporter would hold a crashing input for seconds; libFuzzer reports instead.
    # Libraries keep a few allocations for the life of the process (Tests/Sanitizers/lsan.supp); the
    # slow unwinder follows a leak's stack through glib, which has no frame pointers, to match them.
    status=0
    SWIFT_BACKTRACE=enable=no \
    ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:symbolize=1" \
    LSAN_OPTIONS="suppressions=$PWD/Tests/Sanitizers/lsan.supp:print_suppressions=0" \
        "$build_path/debug/fuzz-$target" "${dictionary[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix=".build/fuzz-artifacts/$target-" "$corpus" "Tests/Fuzz/Corpus/$target" \
        > "$log" 2>&1 || status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    coverage=$(grep -a -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
    if [ "$status" -eq 0 ]; then
        echo "== $target: ${runs:-?} inputs in $seconds s (${rate:-?}/s), ${coverage:-cov: ?}, no crash"
    else
        {
            echo "== $target: FAILED (exit $status) after ${runs:-?} inputs; input and log in .build/fuzz-artifacts/"
            grep -a -E "ERROR|Fatal error|broken promise|SUMMARY|Test unit written|Base64" "$log" | head -n 20 || true
        } >&2
        failed+=("$target")
    fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz.sh: ${failed[*]} crashed" >&2; exit 1; }
