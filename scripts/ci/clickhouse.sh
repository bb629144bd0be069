#!/usr/bin/env bash
# Starts a two-shard ClickHouse on loopback for the ClickHouse event store's tests:
# Debian's clickhouse-server (18.16 on bookworm), installed when missing, run as two
# private servers (own config, data dir, ports), each listing both in the remote_servers
# cluster `logscope`, so a Distributed table over the cluster spreads rows on the two.
# Nothing here starts a system daemon.
#
#   scripts/ci/clickhouse.sh start   # prints the eventStoreUrl to use
#   scripts/ci/clickhouse.sh stop
#
# LOGSCOPE_CI_CLICKHOUSE_DIR: where the servers keep their files (default
# /tmp/logscope-ci-clickhouse); HTTP ports 18123 and 18124, native 19000 and 19001.
set -euo pipefail
dir=${LOGSCOPE_CI_CLICKHOUSE_DIR:-/tmp/logscope-ci-clickhouse}
http_ports=(18123 18124)
tcp_ports=(19000 19001)
url="clickhouse://default@127.0.0.1:${http_ports[0]},127.0.0.1:${http_ports[1]}/logscope?cluster=logscope"

install() {
  command -v clickhouse-server >/dev/null 2>&1 && return
  local policy_added=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && policy_added=1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends clickhouse-server clickhouse-client
  if [ -n "$policy_added" ]; then rm -f /usr/sbin/policy-rc.d; fi
}

config() { # <shard index>
  local i=$1 d="$dir/shard$1"
  mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/log"
  cat >"$d/config.xml" <<XML
<yandex>
  <logger><level>warning</level><log>$d/log/server.log</log><errorlog>$d/log/error.log</errorlog><console>0</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${http_ports[$i]}</http_port>
  <tcp_port>${tcp_ports[$i]}</tcp_port>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_server_memory_usage>1073741824</max_server_memory_usage>
  <remote_servers>
    <logscope>
      <shard><replica><host>127.0.0.1</host><port>${tcp_ports[0]}</port></replica></shard>
      <shard><replica><host>127.0.0.1</host><port>${tcp_ports[1]}</port></replica></shard>
    </logscope>
  </remote_servers>
</yandex>
XML
  cat >"$d/users.xml" <<XML
<yandex>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
}

up() { curl -fsS "http://127.0.0.1:$1/ping" >/dev/null 2>&1; }

start() {
  install >&2
  for i in 0 1; do
    if up "${http_ports[$i]}"; then continue; fi
    config "$i"
    clickhouse-server --config-file="$dir/shard$i/config.xml" --pid-file="$dir/shard$i/server.pid" --daemon
  done
  for i in 0 1; do
    for _ in $(seq 1 60); do up "${http_ports[$i]}" && break; sleep 0.5; done
    up "${http_ports[$i]}" || { cat "$dir/shard$i/log/error.log" >&2 || true; echo "ClickHouse shard $i did not start" >&2; exit 1; }
  done
  sweep
  echo "$url"
}

# Test databases (t_<pid>_<random>, test/helpers/clickhouse.ts) whose test process is gone:
# a run that was killed leaves its database behind; the data dir outlives the servers.
sweep() {
  for i in 0 1; do
    curl -fsS "http://127.0.0.1:${http_ports[$i]}/" --data-binary "SELECT name FROM system.databases WHERE match(name, '^t_[0-9]+_[a-z0-9]+\$')" |
      while read -r db; do
        pid=${db#t_}
        pid=${pid%%_*}
        kill -0 "$pid" 2>/dev/null && continue
        curl -fsS "http://127.0.0.1:${http_ports[$i]}/" --data-binary "DROP DATABASE IF EXISTS $db" >/dev/null
      done
  done
}

stop() {
  for i in 0 1; do
    local pid_file="$dir/shard$i/server.pid"
    [ -f "$pid_file" ] && kill "$(cat "$pid_file")" 2>/dev/null || true
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
