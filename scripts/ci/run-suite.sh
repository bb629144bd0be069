#!/usr/bin/env bash
# CI step: the README's test command (`npm test`) run two test files at a time (vitest's
# default on two cores is one), except the files that assert wall-clock bounds (a restart
# within 3 s, a notification within 2 s, a live update within a second, a take-over, the
# event loop never held 250 ms, a refusal before any password work...):
# those run afterwards, one at a time, so another file's load never decides them.
#
#   scripts/ci/run-suite.sh [vitest options, e.g. --exclude <glob>]
#   RUN_SUITE_ONLY="test/http test/cli" scripts/ci/run-suite.sh   # only these paths
#
# `npm test` alone runs every file one at a time.
set -euo pipefail

TIMED=(test/ops/lifecycle.test.ts test/cluster test/alerts test/live test/cli
  test/e2e/recovery.test.ts test/e2e/search.test.ts test/e2e/search-more.test.ts
  test/ingest-http/syslog.test.ts test/ingest-http/gelf.test.ts test/ingest-http/crash.test.ts
  test/http/triggers.test.ts test/http/dashboards.test.ts test/http/metrics.test.ts
  test/export/streaming.test.ts test/event-store/clickhouse-kill.test.ts test/ui/time-range.test.ts
  test/domain/trigger-index.test.ts test/ingest/protocols/gelf.test.ts
  test/http/fuzz.test.ts test/http/doors.test.ts test/ingest-http/hostile-bodies.test.ts
  test/ingest-http/tcp-intake.test.ts test/ops/process-net.test.ts test/ingest/pipelines/regex-safety.test.ts)

read -r -a only <<<"${RUN_SUITE_ONLY:-}"
within_only() {
  [ ${#only[@]} -eq 0 ] && return 0
  local o
  for o in "${only[@]}"; do
    case $1 in "$o" | "$o"/*) return 0 ;; esac
  done
  return 1
}

not_timed=()
timed=()
for f in "${TIMED[@]}"; do
  case $f in *.ts) not_timed+=(--exclude "$f") ;; *) not_timed+=(--exclude "$f/**") ;; esac
  if within_only "$f"; then timed+=("$f"); fi
done

npm test -- --passWithNoTests --maxWorkers=2 "${not_timed[@]}" "$@" ${only[@]+"${only[@]}"}
if [ ${#timed[@]} -gt 0 ]; then npm test -- --passWithNoTests "$@" "${timed[@]}"; fi
