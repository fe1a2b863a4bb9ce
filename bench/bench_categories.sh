#!/usr/bin/env bash
# bench_categories.sh: what reading categorical features by name costs.  The
# same rows scored by gpu_score_query and by the aggregate's column form with
# the three categorical features as text (looked up in the model's category
# names) and as their codes (real columns), against a plain scan of the same
# columns, in a throwaway PostgreSQL 15.
#
# Usage (as root; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_categories.sh
#
# Environment: BENCH_ROWS (default 1,000,000), BENCH_REPEATS (rounds, default
# 5), GS_PORT (default 54361), GS_TMP.
#
# Model: tests/fixtures/models/x3_catnames.json (XGBoost 3.2, 40 trees of
# depth 5 over amount, country, hour, mcc, channel; country has 9 names,
# mcc 5, channel 3).  Table cat_tx: those columns as text (country, mcc,
# channel drawn from the model's names, 3% NULL) and the same values as
# codes (c_code, m_code, ch_code real).  Queries, timed in the server by
# bench_time (sql_common.sh), jit off, one backend, device 'cpu', work_mem
# 1GB, rounds alternating between the queries:
#
#   plain       SELECT count(id), sum(amount + hour), count(country), count(mcc), count(channel)
#   query_code  gpu_score_query('xcat', 'SELECT id, amount, c_code, hour, m_code, ch_code FROM cat_tx')
#   query_text  gpu_score_query('xcat', 'SELECT id, amount, country, hour, mcc, channel FROM cat_tx')
#   agg_code    gpu_scores((SELECT gpu_score_agg('xcat', id, amount, c_code, hour, m_code, ch_code) ...))
#   agg_text    the same with the text columns
#
# Output: Markdown, the median of each query and its time over the plain
# scan's median; the text and code forms must give the same scores (checked).
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54361}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-bench-categories-$$}
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
as_root cp "$BENCH_DIR/../tests/fixtures/models/x3_catnames.json" "$GS_TMP/models/"
as_root chown -R postgres "$GS_TMP/models"

# the timing functions come with bench_tx; a small one is enough here
make_bench_tx 10 >/dev/null
echo "== creating cat_tx with $BENCH_ROWS rows" >&2
bpsql <<SQL >/dev/null
SELECT gpu_load_model_file('xcat', '$GS_TMP/models/x3_catnames.json');
SELECT setseed(0.42);
CREATE TABLE cat_tx AS
SELECT i::bigint AS id, (random() * 200)::real AS amount, floor(random() * 24)::real AS hour,
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 9)::int END AS ci,
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 5)::int END AS mi,
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 3)::int END AS chi
  FROM generate_series(1, $BENCH_ROWS) i;
ALTER TABLE cat_tx ADD COLUMN country text, ADD COLUMN mcc text, ADD COLUMN channel text,
                   ADD COLUMN c_code real, ADD COLUMN m_code real, ADD COLUMN ch_code real;
UPDATE cat_tx t SET country = c.category, c_code = t.ci
  FROM gpu_model_categories('xcat') c WHERE c.feature = 2 AND c.code = t.ci;
UPDATE cat_tx t SET mcc = c.category, m_code = t.mi
  FROM gpu_model_categories('xcat') c WHERE c.feature = 4 AND c.code = t.mi;
UPDATE cat_tx t SET channel = c.category, ch_code = t.chi
  FROM gpu_model_categories('xcat') c WHERE c.feature = 5 AND c.code = t.chi;
ALTER TABLE cat_tx DROP COLUMN ci, DROP COLUMN mi, DROP COLUMN chi;
VACUUM FULL ANALYZE cat_tx;
SQL

# shellcheck disable=SC2034  # SESSION, Q and ORDER are read by bench_rounds (sql_common.sh)
SESSION="SET jit = off; SET max_parallel_workers_per_gather = 0; SET work_mem = '1GB'; SET pg_gpuscore.device = 'cpu';"
# shellcheck disable=SC2034
declare -A Q=(
    [plain]="SELECT count(id), sum(amount + hour), count(country), count(mcc), count(channel) FROM cat_tx"
    [query_code]="SELECT count(*), sum(score) FROM gpu_score_query('xcat', 'SELECT id, amount, c_code, hour, m_code, ch_code FROM cat_tx')"
    [query_text]="SELECT count(*), sum(score) FROM gpu_score_query('xcat', 'SELECT id, amount, country, hour, mcc, channel FROM cat_tx')"
    [agg_code]="SELECT count(*), sum(score) FROM gpu_scores((SELECT gpu_score_agg('xcat', id, amount, c_code, hour, m_code, ch_code) FROM cat_tx))"
    [agg_text]="SELECT count(*), sum(score) FROM gpu_scores((SELECT gpu_score_agg('xcat', id, amount, country, hour, mcc, channel) FROM cat_tx))"
)
# shellcheck disable=SC2034
ORDER=(plain query_code query_text agg_code agg_text)
declare -A T R   # filled by bench_rounds, read by bench_table
bench_rounds

# the same scores by name and by code (sums of float32 scores in double, same order)
if [ "${R[query_code]}" != "${R[query_text]}" ] || [ "${R[agg_code]}" != "${R[agg_text]}" ]; then
    echo "bench_categories: text and codes score differently: ${R[query_code]} / ${R[query_text]}" >&2
    exit 1
fi

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "## Categorical features by name vs codes ($(date -u +%Y-%m-%d), commit $(git -C "$BENCH_DIR/.." rev-parse --short HEAD))"
echo
echo "$cpu, $(nproc) cores; $BENCH_ROWS rows, 3 categorical features of 5; median of $BENCH_REPEATS rounds, one backend, device cpu."
echo
bench_table
echo
echo "Scores: text and codes agree (count and sum: ${R[query_text]})."
