#!/usr/bin/env bash
# CI step: the README's test command (`npm test`) run two test files at a time (vitest's
# default on two cores is one), except the files that assert wall-clock bounds, named
# `*.timed.test.ts` (a restart within 3 s, a notification within 2 s, a live update within
# a second, a take-over, the event loop never held 250 ms, a refusal before any password
# work...): those run afterwards, one at a time, so another file's load never decides them.
#
#   scripts/ci/run-suite.sh [vitest options, e.g. --project api --project process]
#
# The timed files run each in a fresh module graph (`--isolate`), so nothing an earlier
# file left running shares their wall clock. `npm test` alone runs every file one at a time.
set -euo pipefail

npm test -- --passWithNoTests --maxWorkers=2 --exclude '**/*.timed.test.ts' --exclude '**/node_modules/**' "$@"
npm test -- --passWithNoTests --isolate "$@" .timed.test.ts
