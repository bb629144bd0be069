#!/usr/bin/env bash
# CI step: the README's test command (`npm test`) run two test files at a time (vitest's
# default on two cores is one), except the files that assert wall-clock bounds, named
# `*.timed.test.ts` (a restart within 3 s, a notification within 2 s, a live update within
# a second, a take-over, the event loop never held 250 ms, a refusal before any password
# work...): those run afterwards, one at a time, so another file's load never decides them.
#
#   scripts/ci/run-suite.sh [vitest options, e.g. --project api --project process]
#
# The untimed files share a module graph per worker (`--no-isolate`): each worker imports
# the app once, not once per file, which was a fifth of their time (two workers on SQLite
# 636 -> 451 s); files leave no state behind them (apps closed, env and timers restored).
# The timed files each get a fresh one, so nothing an earlier file left running shares
# their wall clock or their heap. `npm test` alone runs every file one at a time, isolated.
set -euo pipefail

npm test -- --passWithNoTests --maxWorkers=2 --no-isolate --exclude '**/*.timed.test.ts' --exclude '**/node_modules/**' "$@"
npm test -- --passWithNoTests "$@" .timed.test.ts
