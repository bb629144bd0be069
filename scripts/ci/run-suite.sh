#!/usr/bin/env bash
# CI step: the README's test command (`npm test`) run two test files at a time (vitest's
# default on two cores is one), except the files that assert wall-clock bounds, named
# `*.timed.test.ts` (a restart within 3 s, a notification within 2 s, a live update within
# a second, a take-over, the event loop never held 250 ms, a refusal before any password
# work...): those run afterwards, one at a time, so another file's load never decides them
# (but for those waiting for the clock, which run beside them: below).
#
#   scripts/ci/run-suite.sh [vitest options, e.g. --project api --project process]
#
# Every file shares a module graph per worker (`--no-isolate`): each worker imports the
# app once, not once per file, which was a fifth of the untimed files' time (two workers
# on SQLite 636 -> 451 s) and a third of the timed ones' (37 files, about 4.5 s each to
# import afresh: 530 s for 364 s of tests); files leave no state behind them (apps
# closed, env and timers restored), and the timed ones still run alone, one after another.
# `npm test` alone runs every file one at a time, isolated.
# After each part, its slowest files (scripts/ci/slowest.mjs): where the time goes.
set -euo pipefail

reports=$(mktemp -d "${TMPDIR:-/tmp}/logscope-suite.XXXXXX")
trap 'rm -rf "$reports"' EXIT
timing() { printf -- '--reporter=default\n--reporter=json\n--outputFile.json=%s\n' "$reports/$1.json"; }

started=$SECONDS
status=0
mapfile -t report < <(timing untimed)
npm test -- --passWithNoTests --maxWorkers=2 --no-isolate "${report[@]}" \
  --exclude '**/*.timed.test.ts' --exclude '**/node_modules/**' "$@" || status=$?
echo "-- untimed files: $((SECONDS - started)) s"
node scripts/ci/slowest.mjs "$reports/untimed.json"
[ "$status" = 0 ] || exit "$status"
started=$SECONDS
# Timed files that spend their time waiting for the wall clock (a cron minute, a lease to
# expire), marked `// ci: waits for the clock`, run one at a time beside the others: the
# CPU they use while waiting is a poll every quarter second.
mapfile -t waits < <(grep -rl --include='*.timed.test.ts' '^// ci: waits for the clock' test | sort)
mapfile -t report < <(timing waits)
lane=0
if [ "${#waits[@]}" -gt 0 ]; then
  npm test -- --passWithNoTests --maxWorkers=1 --no-isolate "${report[@]}" "$@" "${waits[@]}" \
    >"$reports/waits.log" 2>&1 &
  lane=$!
fi
mapfile -t report < <(timing timed)
npm test -- --passWithNoTests --maxWorkers=1 --no-isolate "${report[@]}" "$@" \
  "${waits[@]/#/--exclude=}" .timed.test.ts || status=$?
if [ "$lane" != 0 ]; then
  wait "$lane" || status=$?
  cat "$reports/waits.log"
fi
echo "-- timed files, one at a time (those waiting for the clock beside them): $((SECONDS - started)) s"
node scripts/ci/slowest.mjs "$reports/timed.json"
[ "$lane" = 0 ] || node scripts/ci/slowest.mjs "$reports/waits.json"
exit "$status"
