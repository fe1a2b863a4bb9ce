#!/usr/bin/env bash
# bench_catboost_names.sh: what finding CatBoost categories by their hash
# costs against finding them by name.  The same CatBoost model saved with
# its training pool (the file names its categories: a text value is looked
# up among a feature's names) and without (no names: a text value is hashed
# as CatBoost hashes it, CityHash64 of CityHash 1.0, and looked up among the
# feature's hashes), both scoring the same rows by gpu_score_query, against
# a plain scan of the same columns, in a throwaway PostgreSQL 15.
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_catboost_names.sh
#
# Environment: BENCH_ROWS (default 1,000,000), BENCH_REPEATS (rounds, default
# 5), GS_PORT (default 54362), GS_TMP.
#
# Model: tests/fixtures/models/cb_cat_combo.json and cb_cat_combo_nopool.json
# (CatBoost 1.2.10, 100 symmetric trees of depth 4 over amount, mcc, country,
# hour, device; CTRs of one and two categories with a binarized number,
# one-hot device values).  Table cb_tx: mcc (40 names), country (4), device
# (6) as text, 2% of each a name never seen, 3% NULL.  Queries, timed in the
# server by bench_time (sql_common.sh), jit off, one backend, device 'cpu',
# rounds alternating between the queries:
#
#   plain   SELECT count(id), sum(amount + hour), count(mcc), count(country), count(device)
#   named   gpu_score_query('cbn', 'SELECT id, amount, mcc, country, hour, device FROM cb_tx')
#   hashed  the same with 'cbh', the file without names
#
# Output: Markdown, the median of each query and its time over the plain
# scan's median; both files must give the same scores (checked).
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54362}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-cbnames-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"
# shellcheck source=sql_common.sh disable=SC1091
source "$BENCH_DIR/sql_common.sh"

BENCH_ROWS=${BENCH_ROWS:-1000000}
BENCH_REPEATS=${BENCH_REPEATS:-5}

install_deps
build_install
start_cluster
trap 'stop_cluster; rm -rf "$GS_TMP"' EXIT

as_root mkdir -p "$GS_TMP/models"
as_root cp "$BENCH_DIR/../tests/fixtures/models/cb_cat_combo.json" \
    "$BENCH_DIR/../tests/fixtures/models/cb_cat_combo_nopool.json" "$GS_TMP/models/"
as_root chown -R postgres "$GS_TMP/models"

# the timing functions come with bench_tx; a small one is enough here
make_bench_tx 10 >/dev/null
echo "== creating cb_tx with $BENCH_ROWS rows" >&2
bpsql <<SQL >/dev/null
SET client_min_messages = warning;
SELECT gpu_load_model_file('cbn', '$GS_TMP/models/cb_cat_combo.json');
SELECT gpu_load_model_file('cbh', '$GS_TMP/models/cb_cat_combo_nopool.json');
SELECT setseed(0.42);
CREATE TABLE cb_tx AS
SELECT i::bigint AS id, (random() * 200)::real AS amount, floor(random() * 24)::real AS hour,
       CASE WHEN r1 < 0.03 THEN NULL WHEN r1 < 0.05 THEN 'zz-never-seen'
            ELSE 'm' || floor(random() * 40)::int END AS mcc,
       CASE WHEN r2 < 0.03 THEN NULL WHEN r2 < 0.05 THEN 'zz-never-seen'
            ELSE (ARRAY['US', 'DE', 'FR', 'GB'])[1 + floor(random() * 4)::int] END AS country,
       CASE WHEN r3 < 0.03 THEN NULL WHEN r3 < 0.05 THEN 'zz-never-seen'
            ELSE (ARRAY['ios', 'android', 'web', 'pos', 'atm', 'kiosk'])[1 + floor(random() * 6)::int] END AS device
  FROM (SELECT i, random() AS r1, random() AS r2, random() AS r3 FROM generate_series(1, $BENCH_ROWS) i) s;
VACUUM FULL ANALYZE cb_tx;
SQL

# shellcheck disable=SC2034  # SESSION, Q and ORDER are read by bench_rounds (sql_common.sh)
SESSION="SET jit = off; SET max_parallel_workers_per_gather = 0; SET work_mem = '1GB'; SET pg_gpuscore.device = 'cpu';"
# shellcheck disable=SC2034
declare -A Q=(
    [plain]="SELECT count(id), sum(amount + hour), count(mcc), count(country), count(device) FROM cb_tx"
    [named]="SELECT count(*), sum(score) FROM gpu_score_query('cbn', 'SELECT id, amount, mcc, country, hour, device FROM cb_tx')"
    [hashed]="SELECT count(*), sum(score) FROM gpu_score_query('cbh', 'SELECT id, amount, mcc, country, hour, device FROM cb_tx')"
)
# shellcheck disable=SC2034
ORDER=(plain named hashed)
declare -A T R   # filled by bench_rounds, read by bench_table
bench_rounds

# the same scores from both files (sums of float32 scores in double, same order)
if [ "${R[named]}" != "${R[hashed]}" ]; then
    echo "bench_catboost_names: the two files score differently: ${R[named]} / ${R[hashed]}" >&2
    exit 1
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "## CatBoost categories by name vs by hash ($(date -u +%Y-%m-%d), commit $(git -C "$BENCH_DIR/.." rev-parse --short HEAD))"
echo
echo "$cpu, $(nproc) cores; $BENCH_ROWS rows, 3 categorical features of 5 given as text; median of $BENCH_REPEATS rounds, one backend, device cpu."
echo
bench_table
echo
echo "Scores: both files agree (count and sum: ${R[hashed]})."
