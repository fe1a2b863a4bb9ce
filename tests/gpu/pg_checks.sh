#!/usr/bin/env bash
# tests/gpu/pg_checks.sh: the in-PostgreSQL checks of a real GPU that no
# fixed expected output can hold (issue 7, part 2), run on the lent machine
# by tests/gpu/device_run.sh's pgchecks step:
#
#   bash tests/gpu/pg_checks.sh PG_ROOT MODEL_DIR > report.md
#
# PG_ROOT is the portable PostgreSQL with pg_gpuscore (.device/pg.txz
# unpacked), MODEL_DIR holds m500x8.ubj and m2000x10.ubj (bench/gpu/
# make_models.py).  On bench_tx (bench/sql_common.sh, PGC_ROWS rows,
# default 10,000,000):
#
#   1. parity per row: gpu_score_query on the GPU into one table, the CPU
#      engine (the parallel aggregate, PGC_WORKERS workers) into another;
#      every row's scores must agree within 1e-6 (trees: in fact equal)
#   2. cancel: gpu_score_query of m2000x10 on the GPU under a 500 ms
#      statement_timeout must end within 1 s of it, and the device's free
#      memory afterwards must be what it was before (gpu_device_info())
#   3. concurrency: PGC_SESSIONS (default 8) sessions score the table on the
#      GPU at once; each must return the serial run's count and sum; the
#      device memory each backend holds is sampled with nvidia-smi
#   4. the pg_regress suite (sql/, expected/) with pg_gpuscore.device =
#      'gpu' for every session: differences are listed, not judged (tests
#      of the device modes expect their own settings)
#
# Without a GPU it can be tried against the CPU mock: GS_TEST_PROVIDER=
# /path/to/mock.so PGC_ROWS=200000 (the device figures then mean nothing).
# Markdown on stdout, progress on stderr; exit status 1 when 1, 2 or 3 failed.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 PG_ROOT MODEL_DIR" >&2; exit 2; }
P=$(realpath "$1")
MODEL_DIR=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PGC_ROWS=${PGC_ROWS:-10000000}
PGC_WORKERS=${PGC_WORKERS:-8}
PGC_SESSIONS=${PGC_SESSIONS:-8}
PORT=${PGC_PORT:-55435}
PROVIDER=${GS_TEST_PROVIDER:-}
# shellcheck source=../../bench/sql_common.sh disable=SC1091
source "$ROOT/bench/sql_common.sh"

# shellcheck source=../../bench/gpu/portable_cluster.sh disable=SC1091
source "$ROOT/bench/gpu/portable_cluster.sh"
log() { echo "pg_checks: $*" >&2; }
fail=0

portable_cluster_start "$P" "$PORT" gs-pgc -c shared_buffers=$(( PGC_ROWS / 5000 + 512 ))MB \
    -c max_wal_size=8GB -c max_connections=$(( PGC_SESSIONS + 20 )) \
    -c max_worker_processes=$(( PGC_WORKERS + 4 )) -c max_parallel_workers="$PGC_WORKERS"
mkdir -p "$W/models"
cp "$MODEL_DIR/m500x8.ubj" "$MODEL_DIR/m2000x10.ubj" "$W/models/"
chown -R "$U" "$W/models"

make_bench_tx "$PGC_ROWS" 8 >&2
for m in m500x8 m2000x10; do
    bpsql -c "SELECT gpu_load_model_file('$m', '$W/models/$m.ubj')" >/dev/null
done
SETP=""
[ -n "$PROVIDER" ] && SETP="SET pg_gpuscore.provider = '$PROVIDER';"
Q="SELECT id, $COLS FROM bench_tx"
free_mem() { echo "SELECT coalesce(free_memory, -1) FROM gpu_device_info()"; }

echo "### pg_checks: a real GPU inside PostgreSQL"
echo
echo "- $TABLE_INFO; commit $(cat "$ROOT/.device/COMMIT" 2>/dev/null || echo unknown)${PROVIDER:+; **provider $PROVIDER: not a GPU**}"
echo "- device: $(bpsql -F ' | ' -c "$SETP SELECT provider_loaded, coalesce(device_name, reason) FROM gpu_device_info()")"
echo

# 1. parity per row
log "1. parity per row"
bpsql -c "$SETP SET pg_gpuscore.device = 'gpu';
  CREATE UNLOGGED TABLE s_gpu AS SELECT * FROM gpu_score_query('m500x8', \$q\$$Q\$q\$);"
bpsql -c "$SETP SET pg_gpuscore.device = 'cpu'; SET max_parallel_workers_per_gather = $PGC_WORKERS;
  SET parallel_setup_cost = 0; ALTER TABLE bench_tx SET (parallel_workers = $PGC_WORKERS);
  CREATE UNLOGGED TABLE s_cpu AS SELECT * FROM gpu_scores((SELECT gpu_score_agg('m500x8', id, $COLS) FROM bench_tx));"
read -r n n_off n_missing maxd <<<"$(bpsql -F ' ' -c "SELECT count(*), count(*) FILTER (WHERE abs(g.score - c.score) > 1e-6),
    count(*) FILTER (WHERE g.id IS NULL OR c.id IS NULL), coalesce(max(abs(g.score - c.score)), 0)
  FROM s_gpu g FULL JOIN s_cpu c USING (id)")"
ok=$([ "$n" = "$PGC_ROWS" ] && [ "$n_off" = 0 ] && [ "$n_missing" = 0 ] && echo yes || echo NO)
[ "$ok" = yes ] || fail=1
echo "1. **parity per row** (m500x8, GPU gpu_score_query vs CPU engine in $PGC_WORKERS workers): $n rows,"
echo "   $n_off differ by more than 1e-6, $n_missing missing on one side, max difference $maxd: $ok"

# 2. cancel
log "2. cancel"
out=$(bpsql -F ' ' 2>&1 <<SQL || true
$SETP
SET pg_gpuscore.device = 'gpu';
SELECT count(*) FROM gpu_score_query('m2000x10', \$q\$$Q LIMIT 100000\$q\$);
SELECT 'before', ($(free_mem));
SET statement_timeout = '500ms';
SELECT 'start', extract(epoch FROM clock_timestamp());
\set ON_ERROR_STOP 0
SELECT count(*) FROM gpu_score_query('m2000x10', \$q\$$Q\$q\$);
\set ON_ERROR_STOP 1
SELECT 'end', extract(epoch FROM clock_timestamp());
RESET statement_timeout;
SELECT 'after', ($(free_mem));
SELECT 'stats', engine, rows FROM gpu_engine_stats() WHERE engine = 'gpu';
SQL
)
before=$(awk '$1 == "before" {print $2}' <<<"$out")
after=$(awk '$1 == "after" {print $2}' <<<"$out")
secs=$(awk '$1 == "start" {s = $2} $1 == "end" {e = $2} END {printf "%.3f", e - s}' <<<"$out")
cancelled=$(grep -c 'canceling statement due to statement timeout' <<<"$out" || true)
ok=$([ "$cancelled" = 1 ] && awk -v s="$secs" 'BEGIN {exit !(s < 1.5)}' && [ -n "$before" ] && [ "$before" = "$after" ] && echo yes || echo NO)
[ "$ok" = yes ] || fail=1
echo "2. **cancel** (m2000x10 over the table, statement_timeout 500 ms): cancelled $cancelled time(s),"
echo "   returned after $secs s (must be < 1.5: the timeout and 1 s), device free memory before $before,"
echo "   after $after bytes (must be equal): $ok"

# 3. concurrent sessions
log "3. $PGC_SESSIONS concurrent sessions"
want=$(bpsql -c "SELECT count(*) || ' ' || round(sum(score::float8)::numeric, 1) FROM s_gpu")
smi=$W/smi.csv
: > "$smi"
if command -v nvidia-smi >/dev/null; then
    ( while :; do nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits >> "$smi" 2>/dev/null; sleep 0.3; done ) &
    SMI_PID=$!
fi
t0=$(date +%s.%N)
pids=()
for s in $(seq 1 "$PGC_SESSIONS"); do
    bpsql -c "$SETP SET pg_gpuscore.device = 'gpu';
      SELECT count(*) || ' ' || round(sum(score::float8)::numeric, 1) FROM gpu_score_query('m500x8', \$q\$$Q\$q\$)" \
        > "$W/s$s.out" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || true; done
t1=$(date +%s.%N)
[ -n "${SMI_PID:-}" ] && kill "$SMI_PID" 2>/dev/null
same=$(cat "$W"/s*.out | grep -cx "$want" || true)
per=$(awk -F', *' '{ if ($2 > m[$1]) m[$1] = $2 } END { n = 0; for (p in m) { n++; s = s sprintf("%s%d", n > 1 ? ", " : "", m[p]) } print n " backend(s), MiB each at most: " (n ? s : "none seen") }' "$smi")
ok=$([ "$same" = "$PGC_SESSIONS" ] && echo yes || echo NO)
[ "$ok" = yes ] || { fail=1; head -5 "$W"/s*.out >&2; }
echo "3. **$PGC_SESSIONS sessions at once** (m500x8 over the table each): $same of $PGC_SESSIONS returned the serial"
echo "   count and sum ($want) in $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}') s; device memory (nvidia-smi): $per: $ok"

# 4. the regression suite with the GPU forced
log "4. pg_regress with pg_gpuscore.device = 'gpu'"
T=$W/regress
mkdir -p "$T/tests"
cp -r "$ROOT/sql" "$ROOT/expected" "$T/"
cp -r "$ROOT/tests/fixtures" "$ROOT/tests/mock_provider" "$T/tests/"
chown -R "$U" "$T"
tests=$(sed -n 's/^REGRESS = //p' "$ROOT/Makefile")
# shellcheck disable=SC2086
"${RUN[@]}" env PGOPTIONS="-c pg_gpuscore.device=gpu${PROVIDER:+ -c pg_gpuscore.provider=$PROVIDER}" \
    "$P/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress" --bindir="$B" \
    --inputdir="$T" --outputdir="$T/out" --host="$W" --port="$PORT" --user=postgres \
    --dbname=contrib_regression --load-extension=pg_gpuscore $tests > "$T/summary.txt" 2>&1 || true
echo "4. **pg_regress with pg_gpuscore.device = 'gpu'**: $(grep -E 'tests (passed|failed)' "$T/summary.txt" | tr -s ' =' ' ')"
grep -E '^test .*FAILED' "$T/summary.txt" | sed 's/^/   - /' || true
if [ -s "$T/out/regression.diffs" ]; then
    echo
    echo '```diff'
    head -c 20000 "$T/out/regression.diffs"
    echo '```'
fi
exit $fail
