#!/usr/bin/env bash
# Ensures the stores the tests use run on loopback: Redis 6379, MariaDB 3306, PostgreSQL 5432, ZooKeeper 2181,
# etcd 2379. Installs from Debian's packages what is missing, starts what is stopped, creates the databases the
# tests use. Idempotent and quick when everything is up; exits non-zero, saying what failed, when a store cannot
# be started. Multi-node topologies (Cluster, Sentinel, ensembles) are started by the tests themselves.
set -uo pipefail

log() { printf 'services: %s\n' "$*"; }
die() { printf 'services: FAILED: %s\n' "$*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port seconds
  local i
  for ((i = 0; i < $2 * 10; i++)); do port_open "$1" && return 0; sleep 0.1; done
  return 1
}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
apt_updated=""
apt_install() {
  if [ -z "$apt_updated" ]; then
    log "apt-get update"
    $SUDO apt-get update -qq >/dev/null || die "apt-get update"
    apt_updated=1
  fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null || die "apt-get install $*"
}

# ---------------------------------------------------------------- Redis
ensure_redis() {
  command -v redis-server >/dev/null || apt_install redis-server
  command -v redis-sentinel >/dev/null || [ -e /usr/bin/redis-sentinel ] || apt_install redis-sentinel
  if ! port_open 6379; then
    log "starting redis on 127.0.0.1:6379"
    $SUDO mkdir -p /var/lib/redis /var/log/redis
    $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log || die "redis-server did not start"
    wait_port 6379 10 || die "redis is not listening on 6379"
  fi
  [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ] || die "redis does not answer PING"
}

# ---------------------------------------------------------------- MariaDB
ensure_mariadb() {
  command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || apt_install mariadb-server mariadb-client
  if ! port_open 3306; then
    log "starting mariadb on 127.0.0.1:3306"
    $SUDO mkdir -p /run/mysqld && $SUDO chown mysql:mysql /run/mysqld 2>/dev/null
    $SUDO start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql \
      --bind-address=127.0.0.1 || die "mariadbd did not start"
    wait_port 3306 30 || die "mariadb is not listening on 3306"
  fi
  local i
  for ((i = 0; i < 50; i++)); do
    mariadb -h 127.0.0.1 -P 3306 -u root -e 'select 1' >/dev/null 2>&1 && break
    # a fresh install lets root in only over the socket: allow the empty password on loopback
    $SUDO mariadb -u root -e "ALTER USER 'root'@'localhost' IDENTIFIED VIA mysql_native_password USING PASSWORD(''); FLUSH PRIVILEGES;" >/dev/null 2>&1
    sleep 0.2
  done
  mariadb -h 127.0.0.1 -P 3306 -u root -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null 2>&1 \
    || die "cannot log in to mariadb as root with an empty password on 127.0.0.1"
}

# ---------------------------------------------------------------- PostgreSQL
ensure_postgres() {
  command -v pg_ctlcluster >/dev/null || apt_install postgresql postgresql-client
  local version
  version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
  [ -n "$version" ] || die "no PostgreSQL cluster in /etc/postgresql"
  if ! port_open 5432; then
    log "starting postgresql $version"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start || die "postgresql did not start"
    wait_port 5432 30 || die "postgresql is not listening on 5432"
  fi
  if ! psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
    log "allowing trust authentication on loopback for the tests"
    local hba="/etc/postgresql/$version/main/pg_hba.conf"
    $SUDO sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
    $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main reload
    sleep 1
    psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1 || die "cannot connect to postgresql as postgres"
  fi
  if [ "$(psql -h 127.0.0.1 -U postgres -d postgres -Atc "select 1 from pg_database where datname='test'")" != 1 ]; then
    psql -h 127.0.0.1 -U postgres -d postgres -qc 'create database test' || die "cannot create database test"
  fi
}

# ---------------------------------------------------------------- ZooKeeper
ensure_zookeeper() {
  [ -x /usr/share/zookeeper/bin/zkServer.sh ] || apt_install zookeeper
  if ! port_open 2181; then
    log "starting zookeeper on 127.0.0.1:2181"
    local dir=/var/lib/distlock-zookeeper
    $SUDO mkdir -p "$dir/data" "$dir/conf" "$dir/log"
    cat <<CFG | $SUDO tee "$dir/conf/zoo.cfg" >/dev/null
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=2181
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,stat,srvr
CFG
    [ -f /etc/zookeeper/conf/log4j.properties ] && $SUDO cp /etc/zookeeper/conf/log4j.properties "$dir/conf/" 2>/dev/null
    $SUDO env ZOOCFGDIR="$dir/conf" ZOO_LOG_DIR="$dir/log" /usr/share/zookeeper/bin/zkServer.sh start "$dir/conf/zoo.cfg" \
      >"$dir/log/start.out" 2>&1 || die "zookeeper did not start: $(tail -5 "$dir/log/start.out")"
    wait_port 2181 30 || die "zookeeper is not listening on 2181"
  fi
}

# ---------------------------------------------------------------- etcd
ensure_etcd() {
  command -v etcd >/dev/null || apt_install etcd-server etcd-client
  if ! port_open 2379; then
    log "starting etcd on 127.0.0.1:2379"
    local dir=/var/lib/distlock-etcd
    $SUDO mkdir -p "$dir"
    $SUDO nohup etcd --name distlock --data-dir "$dir/data" \
      --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
      --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
      --initial-cluster distlock=http://127.0.0.1:2380 >"$dir/etcd.log" 2>&1 &
    wait_port 2379 30 || die "etcd is not listening on 2379: $(tail -5 "$dir/etcd.log")"
  fi
}

# the TLS tests make throw-away certificates with openssl
command -v openssl >/dev/null || apt_install openssl
# the fault kit's clock faults run client processes on libfaketime
command -v faketime >/dev/null || apt_install faketime
ensure_redis
ensure_mariadb
ensure_postgres
ensure_zookeeper
ensure_etcd
log "all up: redis 6379, mariadb 3306, postgresql 5432, zookeeper 2181, etcd 2379"
