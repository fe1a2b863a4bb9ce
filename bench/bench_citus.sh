#!/usr/bin/env bash
# bench_citus.sh: one PostgreSQL node against a Citus cluster of a
# coordinator and two workers, all on this machine, side by side, scoring the
# same table with the same model:
#
#   scan    SELECT count(*), count(*) FILTER (WHERE f1 + ... + f30 > 0): the
#           query without scoring (a sum of reals would depend on the order)
#   filter  SELECT count(*) FILTER (WHERE gpu_score('m', ARRAY[f1, ..., f30]) > 0.5)
#   table   CALL gpu_score_table('m', 'bench_tx', 'id', target => 'bench_res', ...)
#           into an empty results table (co-located with bench_tx on Citus)
#   query   gpu_score_query('m', 'SELECT id, f1, ..., f30 FROM bench_tx'): on Citus
#           rewritten for the workers, the (id, score) rows sent back
#   agg     gpu_scores((SELECT gpu_score_agg('m', id, ARRAY[f1, ..., f30]) FROM bench_tx)):
#           on Citus partial aggregates on the workers, the pairs sent back
#
# The single node runs with 0 and with 2 parallel workers per gather (this
# machine's cores); the Citus workers each run their shards' queries (4
# shards, 2 per worker).  On a 2-core machine the cluster's three servers share
# the same two cores: the benchmark shows where the work runs and what the
# distribution costs, not the speed-up of more machines (docs/reference.md
# estimates that from per-node rates).  Every variant's result must equal the
# single node's (exit status 1 otherwise).
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh and Citus built by
# ../shared/citus/build.sh):
#
#   bash bench/bench_citus.sh
#
# Environment: BENCH_ROWS (default 2,000,000), BENCH_REPEATS (default 3),
# BENCH_MODEL (default the fixture fraud_binary.json: 60 trees, 30 features),
# GS_PORT (default 54371: the single node; the cluster takes the next three),
# GS_TMP, PG_BIN.  Output: Markdown on stdout.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54371}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-citus-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

BENCH_ROWS=${BENCH_ROWS:-2000000}
BENCH_REPEATS=${BENCH_REPEATS:-3}
MODEL_FILE=${BENCH_MODEL:-$BENCH_DIR/../tests/fixtures/models/fraud_binary.json}
LIBDIR=$(pg_config --pkglibdir)
[ -f "$LIBDIR/citus.so" ] || { echo "bench_citus: Citus is not installed: run ../shared/citus/build.sh" >&2; exit 1; }

install_deps
build_install
start_cluster                       # the single node, at GS_PORT
SINGLE=$GS_PORT
COORD=$((GS_PORT + 1))
W1=$((GS_PORT + 2))
W2=$((GS_PORT + 3))

citus_up() {
    local port=$1 dir=$GS_TMP/citus$1
    as_root runuser -u postgres -- "$PG_BIN/initdb" -D "$dir" -A trust -U postgres >/dev/null
    as_root runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$dir" -w -l "$GS_TMP/citus$port.log" \
        -o "-p $port -k $GS_TMP -c listen_addresses='' -c shared_preload_libraries=citus -c max_prepared_transactions=20 -c citus.node_conninfo=sslmode=disable -c citus.shard_count=4 -c jit=off" start >/dev/null
    psql -X -q -At -h "$GS_TMP" -p "$port" -d postgres -c "CREATE EXTENSION citus"
}
citus_down() {
    for p in $COORD $W1 $W2; do
        [ -f "$GS_TMP/citus$p/postmaster.pid" ] &&
            as_root runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$GS_TMP/citus$p" -m fast stop >/dev/null 2>&1
    done
    stop_cluster
    as_root rm -rf "$GS_TMP"
}
trap citus_down EXIT
for p in $COORD $W1 $W2; do citus_up "$p"; done
cpsql() { psql -X -q -At -v ON_ERROR_STOP=1 -h "$GS_TMP" -p "$COORD" -d postgres "$@"; }
cpsql -c "SELECT citus_set_coordinator_host('$GS_TMP', $COORD)" \
      -c "SELECT citus_add_node('$GS_TMP', $W1)" -c "SELECT citus_add_node('$GS_TMP', $W2)" >/dev/null

as_root mkdir -p "$GS_TMP/models"
as_root cp "$MODEL_FILE" "$GS_TMP/models/model.json"
as_root chown -R postgres "$GS_TMP/models"

# the table on the single node, then the same rows in the cluster
make_bench_tx "$BENCH_ROWS" 2 >&2
bpsql -c "ALTER TABLE bench_tx ADD PRIMARY KEY (id)" \
      -c "CREATE TABLE bench_res (id bigint PRIMARY KEY, score real)" \
      -c "SELECT gpu_load_model_file('m', '$GS_TMP/models/model.json')" >/dev/null
echo "== copying bench_tx into the cluster" >&2
cpsql -c "CREATE EXTENSION pg_gpuscore" \
      -c "CREATE TABLE bench_tx (id bigint PRIMARY KEY, $(feature_list " real, ") real)" \
      -c "SELECT create_distributed_table('bench_tx', 'id')" \
      -c "CREATE TABLE bench_res (id bigint PRIMARY KEY, score real)" \
      -c "SELECT create_distributed_table('bench_res', 'id', colocate_with => 'bench_tx')" \
      -c "SELECT gpu_load_model_file('m', '$GS_TMP/models/model.json')" >/dev/null
bpsql -c "COPY bench_tx TO STDOUT" | cpsql -c "COPY bench_tx FROM STDIN"
cpsql -c "VACUUM ANALYZE bench_tx" >/dev/null

FEATS="ARRAY[$COLS]"
FNAMES="ARRAY[$(for i in $(seq 1 30); do printf "'f%d'%s" "$i" "$([ "$i" -lt 30 ] && echo ,)"; done)]::name[]"
declare -A SQL=(
    [scan]="SELECT count(*) || ' ' || count(*) FILTER (WHERE $SUMEXPR > 0) FROM bench_tx"
    [filter]="SELECT count(*) FILTER (WHERE gpu_score('m', $FEATS) > 0.5) FROM bench_tx"
    [table]="TRUNCATE bench_res
CALL gpu_score_table('m', 'bench_tx', 'id', target => 'bench_res', features => $FNAMES, batch_size => 500000)
SELECT count(*) || ' ' || round(sum(score::numeric), 2) FROM bench_res"
    [query]="SELECT count(*) || ' ' || round(sum(score::numeric), 2) FROM gpu_score_query('m', 'SELECT id, $COLS FROM bench_tx')"
    [agg]="SELECT count(*) || ' ' || round(sum(score::numeric), 2) FROM gpu_scores((SELECT gpu_score_agg('m', id, $FEATS) FROM bench_tx))"
)
# seconds of one run of q (one statement per line, each its own -c: CALL
# must not run in a transaction block) in a psql session on port p with settings s
timed() {
    local p=$1 s=$2 q=$3 t0 t1 out args=() part
    readarray -t parts <<<"$q"
    for part in "${parts[@]}"; do args+=(-c "$part"); done
    t0=$(date +%s.%N)
    out=$(psql -X -q -At -v ON_ERROR_STOP=1 -h "$GS_TMP" -p "$p" -d postgres -c "SET jit = off; $s" \
        -c "SET client_min_messages = warning" "${args[@]}" | tail -1)
    t1=$(date +%s.%N)
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $out"
}
status=0
declare -A secs want
for q in scan filter table query agg; do
    for v in single0 single2 citus; do
        case $v in
            single0) port=$SINGLE; set="SET max_parallel_workers_per_gather = 0;" ;;
            single2) port=$SINGLE; set="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;" ;;
            citus) port=$COORD; set="" ;;
        esac
        echo "== $q, $v" >&2
        timed "$port" "$set" "${SQL[$q]}" >/dev/null      # warm-up
        runs=()
        for _ in $(seq 1 "$BENCH_REPEATS"); do
            r=$(timed "$port" "$set" "${SQL[$q]}")
            runs+=("${r%% *}")
            res=${r#* }
            [ -n "${want[$q]:-}" ] || want[$q]=$res
            [ "$res" = "${want[$q]}" ] || { echo "bench_citus: $q $v gave $res, the single node ${want[$q]}" >&2; status=1; }
        done
        secs[$q,$v]=$(median "${runs[@]}")
    done
done
plan=$(cpsql -c "EXPLAIN (COSTS OFF) SELECT count(*) FILTER (WHERE gpu_score('m', $FEATS) > 0.5) FROM bench_tx" | grep -E "Task Count|GpuScore|Custom Scan" | sed 's/^ *//' | paste -sd';' -)

CPU_MODEL=$(awk -F: '/model name/ {gsub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
echo "### bench_citus: one node against a Citus coordinator with two workers, same machine"
echo
echo "- PostgreSQL $(bpsql -c 'SHOW server_version'), Citus $(cpsql -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"), CPU: $CPU_MODEL, $(nproc) cores; commit $(git -C "$BENCH_DIR/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "- model $(basename "$MODEL_FILE") ($(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth FROM gpu_models WHERE name = 'm'")), $TABLE_INFO; 4 shards on 2 workers"
echo "- CPU engine everywhere (no GPU here); median of $BENCH_REPEATS runs after a warm-up, wall time of psql"
echo "- the cluster's plan of the filter query: $plan"
echo
echo "| query | single node, serial s | single node, 2 parallel workers s | Citus, 2 workers s | Citus vs serial | rows/s on Citus |"
echo "|---|---:|---:|---:|---:|---:|"
for q in scan filter table query agg; do
    awk -v q="$q" -v a="${secs[$q,single0]}" -v b="${secs[$q,single2]}" -v c="${secs[$q,citus]}" -v n="$BENCH_ROWS" \
        'BEGIN {printf "| %s | %.2f | %.2f | %.2f | %.2fx | %.0f |\n", q, a, b, c, a / c, n / c}'
done
echo
echo "Every variant's result equals the single node's: $([ $status = 0 ] && echo yes || echo NO)."
exit $status
