#!/usr/bin/env bash
# Makes sure the database servers the integration tests use are up. On this kind of machine
# they are started before a session; this only starts one that is not answering, with the
# machine's own commands, and waits for its port. Never fails by itself: a server that stays
# down makes its tests fail under CI=true (they never skip there).
set -u

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 30); do
    port_open "$1" && return 0
    sleep 1
  done
  echo "ensure-services: port $1 still closed" >&2
  return 1
}

if ! port_open 5432 && command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "ensure-services: starting PostgreSQL" >&2
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  wait_port 5432 || true
fi
if ! port_open 3306 && [ -x /usr/sbin/mariadbd ]; then
  echo "ensure-services: starting MariaDB" >&2
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  wait_port 3306 || true
fi
if ! port_open 6379 && command -v redis-server >/dev/null 2>&1; then
  echo "ensure-services: starting Redis" >&2
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  wait_port 6379 || true
fi
exit 0
