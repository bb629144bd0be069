#!/usr/bin/env bash
# CI step: the tests that depend on the Node version (SQLite metadata) on Node 24, in a
# temporary copy of the committed tree (HEAD), so the checkout's node_modules (built for
# the machine's Node) stay as they are.
#
# Node 24 comes from the npm registry: the package node-linux-<arch> is Node's official
# Linux build. (The `node` package would pull the same one in through an install script;
# installing the platform package directly needs none.) Nothing is compiled: the native
# modules (DuckDB, libsql, snappy, resvg) come prebuilt from the npm registry. On Node 24
# the metadata store runs on node:sqlite, which the run checks; libsql's adapter is tested
# there too.
#
# LOGSCOPE_CI_NODE24_PREFIX: where Node 24 is installed (default /opt/logscope-ci/node24);
# it is installed once and reused while its major version is 24.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)

prefix=${LOGSCOPE_CI_NODE24_PREFIX:-/opt/logscope-ci/node24}
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "node24: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
pkg=node-linux-$arch
home=$prefix/node_modules/$pkg

node24_ready() {
  [ -x "$home/bin/node" ] &&
    [ "$("$home/bin/node" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" = 24 ]
}
if ! node24_ready; then
  echo "installing $pkg@24 into $prefix"
  mkdir -p "$prefix"
  npm install --no-save --no-audit --no-fund --no-package-lock --prefix "$prefix" "$pkg@24"
  node24_ready || { echo "node24: $pkg@24 in $prefix lacks bin/node" >&2; exit 1; }
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/logscope-node24.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
git -C "$repo" archive HEAD | tar -x -C "$tmp"
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
  echo "note: the Node 24 run tests HEAD; uncommitted changes in $repo are not in it"
fi
cd "$tmp"

export PATH=$home/bin:$PATH
unset LOGSCOPE_TEST_DATABASE_URL
# ClickHouse is a server the event-store kind reaches over HTTP, the same on any Node; the
# Node-dependent store is DuckDB's native module, which that kind runs here.
unset LOGSCOPE_TEST_CLICKHOUSE_URL LOGSCOPE_TEST_REQUIRE_CLICKHOUSE
# The browser tests ran on Node 20 already; here they would add minutes to a CI near its
# 30-minute budget and test the same browser code again.
unset LOGSCOPE_TEST_REQUIRE_BROWSER
export LOGSCOPE_TEST_CHROMIUM=/nonexistent/chromium-skipped-on-node24
echo "Node $(node -v) ($(command -v node)), npm $(npm -v), HEAD $(git -C "$repo" rev-parse --short HEAD)"

# node_modules for Node 24 are installed once per lockfile and kept beside Node 24; the
# copy links to them. A failed install leaves no
# marker and is done again.
lock=$(sha256sum package-lock.json | cut -c1-16)
modules=$prefix/modules-$(node -v)-$lock
if [ ! -f "$modules/.installed" ]; then
  rm -rf "$prefix"/modules-*
  mkdir -p "$modules"
  cp package.json package-lock.json "$modules/"
  start=$SECONDS
  (cd "$modules" && npm ci --no-audit --no-fund)
  echo "npm ci on Node $(node -v): $((SECONDS - start)) s"
  touch "$modules/.installed"
else
  echo "node_modules for Node $(node -v) and this lockfile: $modules (built earlier)"
fi
ln -s "$modules/node_modules" node_modules
# The native modules load in Node 24.
node -e "new (require('libsql'))(':memory:').close(); console.log('native modules load on Node', process.version)"
# The metadata store uses Node's own node:sqlite on Node 24.
driver=$(node --import tsx --input-type=module -e "
  const { openSqliteDatabase } = await import('./src/metadata/sqlite-driver.ts');
  const sqlite = await openSqliteDatabase(':memory:');
  sqlite.database.close();
  process.stdout.write(sqlite.driver);")
echo "metadata SQLite library on Node $(node -v): $driver"
[ "$driver" = node:sqlite ] || { echo "node24: the metadata store chose $driver, not node:sqlite" >&2; exit 1; }

# What differs between Node versions: the native modules (DuckDB, libsql, node:sqlite), the
# HTTP and socket stack, zlib, worker threads, the build and the process lifecycle: the
# metadata and process kinds (real servers on real sockets, started, killed and restarted)
# and the event stores (vitest.config.ts). The api kind answers through Fastify's inject,
# over the same stores and workers the kinds above run: on Node 20 it ran twice already,
# and here it would add a third of CI's time. The rest (the query language, renderers,
# parsers, the browser) ran on Node 20 and tests JavaScript that does not change with the
# runtime.
start=$SECONDS
status=0
# The log shippers' tests (of the process kind) test daemons, not Node: they ran on Node 20.
scripts/ci/run-suite.sh --project metadata --project process --project event-store \
  --exclude 'test/process/shippers/**' || status=$?
echo "npm test on Node $(node -v): $((SECONDS - start)) s, exit $status"
exit "$status"
