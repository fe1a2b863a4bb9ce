#!/usr/bin/env bash
# bench_triggers.sh: what the scoring triggers cost an INSERT workload, measured
# with pgbench in a throwaway PostgreSQL 15 cluster (CPU only).
#
# Usage (as root, from anywhere; Debian 12 with the deps of .ci/lib.sh):
#
#   bash bench/bench_triggers.sh        # ~3 min on 2 cores once the packages are installed
#
# Environment: BENCH_SECONDS (pgbench -T per run, default 20), BENCH_CLIENTS
# (pgbench -c, default 16), BENCH_THREADS (pgbench -j, default 2), GS_PORT
# (default 54345, its own port), GS_TMP (cluster dir, default
# /tmp/pg_gpuscore-trig-PID).
#
# What it does: install_deps, build_install and start_cluster from .ci/lib.sh;
# loads the bundled demo model tests/fixtures/models/demo_fraud.ubj as 'fraud'
# (150 trees of depth 6 over the 30 named features of
# tests/fixtures/demo_fraud_features.txt) with gpu_load_model_file; creates
#
#   transactions(id bigserial primary key, <the 30 features> real,
#                fraud_score real, is_suspicious boolean)
#   fraud_alerts(key bigint, score real, model text, model_version integer,
#                alerted_at timestamptz)
#
# and runs two pgbench workloads (custom scripts, -n, BENCH_CLIENTS clients):
#
#   single  INSERT INTO transactions (...) SELECT <30 random() expressions>
#             FROM (SELECT random() < 0.01 AS risky FROM generate_series(1, 1) OFFSET 0) d
#           one row per transaction
#   batch   the same over generate_series(1, 1000): 1000 rows per transaction
#
# (1% of the rows, "risky", are drawn with the risk factors of the demo model's
# training data, so that some score above 0.9 and the alert trigger inserts alerts)
#
# each under four trigger configurations:
#
#   none    no trigger
#   row     BEFORE INSERT OR UPDATE FOR EACH ROW gpu_score_trigger('model=fraud',
#           'score_column=fraud_score', 'flag_column=is_suspicious', 'threshold=0.9')
#   alert   AFTER INSERT REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
#           gpu_alert_trigger('model=fraud', 'key_column=id', 'threshold=0.9',
#           'alerts_table=fraud_alerts')
#   both    the two together
#
# The features come from the model's feature names (no 'features=' argument).
# transactions and fraud_alerts are truncated and a CHECKPOINT taken before each
# run. After each run it checks: the table holds tps x duration rows (about),
# with a trigger scoring rows every row has a non-NULL fraud_score and
# is_suspicious = (fraud_score >= 0.9); with the alert trigger the alerts are
# exactly the rows whose gpu_score() is >= 0.9 (with both: the rows flagged
# is_suspicious, with the same score). Any failed check or pgbench error fails
# the script. Inserts/s = tps x rows per transaction; the ratio is against
# "none" of the same workload. Writes bench/results/YYYY-MM-DD-cpu-triggers.md
# and prints it. The cluster is stopped and removed on exit.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export GS_PORT=${GS_PORT:-54345}
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore-trig-$$}
# shellcheck source=../.ci/lib.sh disable=SC1091
source "$BENCH_DIR/../.ci/lib.sh"

BENCH_SECONDS=${BENCH_SECONDS:-20}
BENCH_CLIENTS=${BENCH_CLIENTS:-16}
BENCH_THREADS=${BENCH_THREADS:-2}
PGBENCH=$PG_BIN/pgbench
DB=bench_triggers
BATCH_ROWS=1000
RISKY_RATE=0.01   # share of rows drawn with fraud risk factors
RISKY_PCT=1       # the same, in percent (for the report)
CONFIGS=(none row alert both)
WORKLOADS=(single batch)

t_start=$(date +%s)
DATE=$(date -u +%F)
RESULT=$BENCH_DIR/results/$DATE-cpu-triggers.md
WORK=$(mktemp -d)

# psql on the benchmark database: no psqlrc, quiet, unaligned, stop on error.
bpsql() {
    psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" "$@"
}

# Value of a "Key: value" line of lscpu.
lscpu_field() {
    LC_ALL=C lscpu | sed -n "s/^$1:[[:space:]]*//p" | head -n 1
}

# SQL expression (real) drawing a value of a demo feature: an ordinary transaction, or,
# where the row's "risky" draw is true (RISKY_RATE of the rows), one with the risk
# factors of make_fraud() in tests/fixtures/gen_fixtures.py (so that some rows score
# above the 0.9 threshold and the alert trigger has alerts to insert).
feature_expr() {
    local v r=""
    case "$1" in
        amount)             v="exp(2.5 + 3 * random())";         r="exp(6 + random())" ;;
        avg_amount_30d)     v="exp(2.5 + 3 * random())" ;;
        hour)               v="floor(24 * random())";            r="1 + floor(5 * random())" ;;
        merchant_risk)      v="random() ^ 2";                    r="0.8 + 0.2 * random()" ;;
        device_age_days)    v="floor(-250 * ln(1 - random()))";  r="floor(5 * random())" ;;
        distance_km)        v="exp(5 * random())";               r="200 + 2000 * random()" ;;
        n_tx_1h)            v="floor(4 * random() ^ 2)";         r="2 + floor(3 * random())" ;;
        n_tx_24h)           v="floor(12 * random())" ;;
        amount_ratio)       v="exp(2 * random() - 1)";           r="3.5 + 3 * random()" ;;
        card_age_days)      v="floor(3650 * random())" ;;
        account_age_days)   v="floor(4000 * random())" ;;
        customer_age)       v="18 + floor(62 * random())" ;;
        is_foreign)         v="(random() < 0.08)::int";          r="1" ;;
        is_online)          v="(random() < 0.4)::int";           r="1" ;;
        is_night)           v="(random() < 0.25)::int";          r="1" ;;
        ip_risk)            v="random()";                        r="0.8 + 0.2 * random()" ;;
        failed_logins_7d)   v="floor(3 * random() ^ 4)";         r="1 + floor(3 * random())" ;;
        chargebacks_1y)     v="(random() < 0.05)::int";          r="(random() < 0.7)::int" ;;
        velocity_score)     v="3 * random()" ;;
        balance)            v="exp(5 + 4 * random())" ;;
        credit_limit)       v="exp(6 + 4 * random())" ;;
        days_since_last_tx) v="-3 * ln(1 - random())" ;;
        email_domain_risk)  v="random() ^ 3";                    r="0.4 + 0.6 * random()" ;;
        addr_mismatch)      v="(random() < 0.2)::int";           r="1" ;;
        n_cards_on_device)  v="1 + floor(2 * random() ^ 6)" ;;
        session_seconds)    v="exp(2 + 4 * random())" ;;
        pos_entry_mode)     v="floor(5 * random())" ;;
        noise)              v="4 * random() - 2" ;;
        *)                  v="random()" ;;   # mcc_risk, utilization
    esac
    if [ -n "$r" ]; then
        printf '(CASE WHEN risky THEN %s ELSE %s END)::real' "$r" "$v"
    else
        printf '(%s)::real' "$v"
    fi
}

mapfile -t FEATURES < "$GS_ROOT/tests/fixtures/demo_fraud_features.txt"
[ "${#FEATURES[@]}" -eq 30 ] || { echo "bench_triggers: expected 30 features" >&2; exit 1; }
COLS="" EXPRS="" COLDEFS=""
for f in "${FEATURES[@]}"; do
    COLS+="${COLS:+, }$f"
    EXPRS+="${EXPRS:+, }$(feature_expr "$f")"
    COLDEFS+=", $f real"
done

# pgbench scripts (read by pgbench on this side, one statement per line)
# (OFFSET 0 keeps the subquery, so that "risky" is drawn once per row)
for w in single batch; do
    n=1
    [ "$w" = batch ] && n=$BATCH_ROWS
    echo "INSERT INTO transactions ($COLS) SELECT $EXPRS FROM (SELECT random() < $RISKY_RATE AS risky FROM generate_series(1, $n) OFFSET 0) AS d;" \
        > "$WORK/$w.sql"
done

install_deps
build_install
cd /    # the server processes may not be able to enter the repository
start_cluster
trap 'stop_cluster; as_root rm -rf "$GS_TMP"; rm -rf "$WORK"' EXIT

model_file=$GS_TMP/demo_fraud.ubj
as_root cp "$GS_ROOT/tests/fixtures/models/demo_fraud.ubj" "$model_file"
as_root chmod a+r "$model_file"

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $DB"
bpsql -v model_file="$model_file" <<SQL
CREATE EXTENSION pg_gpuscore;
SELECT gpu_load_model_file('fraud', :'model_file') \\g /dev/null
CREATE TABLE transactions (id bigserial PRIMARY KEY$COLDEFS,
                           fraud_score real, is_suspicious boolean);
CREATE TABLE fraud_alerts (key bigint, score real, model text, model_version integer,
                           alerted_at timestamptz);
SQL
names=$(bpsql -c "SELECT array_to_string(feature_names, ' ') FROM gpu_models WHERE name = 'fraud'")
[ "$names" = "${FEATURES[*]}" ] || { echo "bench_triggers: model feature names differ from the fixture list" >&2; exit 1; }

ROW_TRIGGER="CREATE TRIGGER flag_tx BEFORE INSERT OR UPDATE ON transactions FOR EACH ROW
  EXECUTE FUNCTION gpu_score_trigger('model=fraud', 'score_column=fraud_score',
                                     'flag_column=is_suspicious', 'threshold=0.9');"
ALERT_TRIGGER="CREATE TRIGGER alert_tx AFTER INSERT ON transactions REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT
  EXECUTE FUNCTION gpu_alert_trigger('model=fraud', 'key_column=id', 'threshold=0.9',
                                     'alerts_table=fraud_alerts');"

set_triggers() {   # $1: none | row | alert | both
    local sql="SET client_min_messages = warning;
               DROP TRIGGER IF EXISTS flag_tx ON transactions;
               DROP TRIGGER IF EXISTS alert_tx ON transactions;"
    case "$1" in row | both) sql+="$ROW_TRIGGER" ;; esac
    case "$1" in alert | both) sql+="$ALERT_TRIGGER" ;; esac
    bpsql -c "$sql"
}

fail() { echo "bench_triggers: $*" >&2; exit 1; }

declare -A TPS RATE STORED ALERTS
for w in "${WORKLOADS[@]}"; do
    rows_per_tx=1
    [ "$w" = batch ] && rows_per_tx=$BATCH_ROWS
    for c in "${CONFIGS[@]}"; do
        set_triggers "$c"
        bpsql -c "TRUNCATE transactions, fraud_alerts RESTART IDENTITY" -c "CHECKPOINT"
        echo "== $w inserts ($rows_per_tx row(s)/transaction), trigger: $c, ${BENCH_SECONDS}s"
        "$PGBENCH" -n -c "$BENCH_CLIENTS" -j "$BENCH_THREADS" -T "$BENCH_SECONDS" \
            -f "$WORK/$w.sql" "$DB" > "$WORK/pgbench.out" 2>&1 \
            || { cat "$WORK/pgbench.out" >&2; fail "pgbench failed ($w, $c)"; }
        tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' "$WORK/pgbench.out")
        [ -n "$tps" ] || { cat "$WORK/pgbench.out" >&2; fail "no tps in the pgbench output"; }
        failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
        [ "${failed:-0}" = 0 ] || fail "$failed failed transactions ($w, $c)"
        TPS[$w,$c]=$tps
        RATE[$w,$c]=$(awk -v t="$tps" -v r="$rows_per_tx" 'BEGIN { printf "%.0f", t * r }')

        # sanity checks on what was stored
        IFS='|' read -r n n_null n_badflag n_flag n_alerts < <(bpsql -c "
            SELECT (SELECT count(*) FROM transactions),
                   (SELECT count(*) FROM transactions WHERE fraud_score IS NULL),
                   (SELECT count(*) FROM transactions
                     WHERE is_suspicious IS DISTINCT FROM (fraud_score >= 0.9)),
                   (SELECT count(*) FROM transactions WHERE is_suspicious),
                   (SELECT count(*) FROM fraud_alerts)")
        STORED[$w,$c]=$n
        ALERTS[$w,$c]=$n_alerts
        [ "$n" -gt 0 ] || fail "no rows stored ($w, $c)"
        case "$c" in
            row | both)
                [ "$n_null" = 0 ] || fail "$n_null of $n rows have a NULL fraud_score ($w, $c)"
                [ "$n_badflag" = 0 ] || fail "$n_badflag rows with is_suspicious != (fraud_score >= 0.9) ($w, $c)" ;;
            *)
                [ "$n_null" = "$n" ] || fail "rows scored without a row trigger ($w, $c)" ;;
        esac
        case "$c" in
            none | row)
                [ "$n_alerts" = 0 ] || fail "alerts without an alert trigger ($w, $c)" ;;
            alert)
                expect=$(bpsql -c "SELECT count(*) FROM transactions
                                    WHERE gpu_score('fraud', ARRAY[$COLS]) >= 0.9")
                [ "$n_alerts" = "$expect" ] || fail "$n_alerts alerts, $expect rows with gpu_score >= 0.9 ($w, $c)" ;;
            both)
                mismatch=$(bpsql -c "SELECT count(*) FROM transactions t
                                       FULL JOIN fraud_alerts a ON a.key = t.id AND t.is_suspicious
                                      WHERE (t.is_suspicious OR a.key IS NOT NULL)
                                        AND (a.key IS NULL OR t.id IS NULL OR a.score <> t.fraud_score
                                             OR a.model <> 'fraud')")
                if [ "$n_alerts" != "$n_flag" ] || [ "$mismatch" != 0 ]; then
                    fail "alerts ($n_alerts) differ from the rows flagged ($n_flag; $mismatch mismatches) ($w, $c)"
                fi ;;
        esac
        echo "   tps $tps, inserts/s ${RATE[$w,$c]}, rows stored $n, non-NULL fraud_score $((n - n_null)), alerts $n_alerts"
    done
done
set_triggers none

# ---------------------------------------------------------------------------------------
PG_VERSION=$(bpsql -c "SHOW server_version")
MODEL_INFO=$(bpsql -c "SELECT n_trees || ' trees, max_depth ' || max_depth || ', ' || n_features || ' features, ' || objective
                         FROM gpu_models WHERE name = 'fraud'")
CPU_MODEL=$(lscpu_field "Model name")
HYPERVISOR=$(lscpu_field "Hypervisor vendor")
CORES=$(nproc)
MEM=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
COMMIT=$(git -C "$GS_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
DIRTY=$(git -C "$GS_ROOT" status --porcelain -- src sql Makefile cuda 2>/dev/null | awk '{print $2}' | tr '\n' ' ')
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
t_total=$(( $(date +%s) - t_start ))

{
    echo "# pg_gpuscore trigger benchmark (CPU), $DATE"
    echo
    echo "- date: $(date -u '+%F %T') UTC"
    echo "- git commit: $COMMIT${DIRTY:+ (working tree has uncommitted changes in: ${DIRTY% })}"
    echo "- machine: $CPU_MODEL, $CORES cores${HYPERVISOR:+ ($HYPERVISOR VM)}, $MEM RAM, Linux $(uname -r); no GPU used"
    echo "- PostgreSQL: $PG_VERSION; pgbench: $("$PGBENCH" --version)"
    echo "- model: tests/fixtures/models/demo_fraud.ubj as 'fraud' ($MODEL_INFO)"
    echo "- pgbench: \`-n -c $BENCH_CLIENTS -j $BENCH_THREADS -T $BENCH_SECONDS -f <script>\`, one run per cell, TRUNCATE + CHECKPOINT before each"
    echo "- load average at the end: $LOAD; total run time: $((t_total / 60)) min $((t_total % 60)) s"
    echo
    echo "**The machine has $CORES cores shared by $BENCH_CLIENTS clients (and pgbench itself), so"
    echo "absolute numbers are low; the ratios against \"no trigger\" are what matter.**"
    echo
    echo "Workloads (random feature values drawn in SQL with \`random()\`; $RISKY_PCT% of the rows drawn"
    echo "with the risk factors of the demo model's training data, so that some score >= 0.9):"
    echo
    echo "- single-row: \`INSERT INTO transactions (amount, ..., noise) SELECT <30 random() expressions>\`"
    echo "- 1000-row batch: the same \`SELECT\` over \`generate_series(1, $BATCH_ROWS)\`, one statement"
    echo
    echo "Triggers: *row* = \`gpu_score_trigger('model=fraud', 'score_column=fraud_score',"
    echo "'flag_column=is_suspicious', 'threshold=0.9')\` BEFORE INSERT OR UPDATE FOR EACH ROW;"
    echo "*statement* = \`gpu_alert_trigger('model=fraud', 'key_column=id', 'threshold=0.9',"
    echo "'alerts_table=fraud_alerts')\` AFTER INSERT REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT."
    echo "Features from the model's feature names."
    echo
    echo "| workload | trigger | tps | inserts/s | vs no trigger | rows stored | alerts |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    for w in "${WORKLOADS[@]}"; do
        for c in "${CONFIGS[@]}"; do
            case "$w" in single) wl="single-row INSERT" ;; *) wl="$BATCH_ROWS-row INSERT ... SELECT" ;; esac
            case "$c" in
                none) cl="none" ;; row) cl="row (gpu_score_trigger)" ;;
                alert) cl="statement (gpu_alert_trigger)" ;; both) cl="both" ;;
            esac
            awk -v wl="$wl" -v cl="$cl" -v tps="${TPS[$w,$c]}" -v r="${RATE[$w,$c]}" \
                -v base="${RATE[$w,none]}" -v n="${STORED[$w,$c]}" -v a="${ALERTS[$w,$c]}" \
                'BEGIN { printf "| %s | %s | %.1f | %d | %.2fx | %d | %d |\n", wl, cl, tps, r, r / base, n, a }'
        done
    done
    echo
    echo "One 20 s run per cell on 2 shared cores: treat differences under ~15% as noise."
    echo
    echo "Checks passed after every run: with a row trigger every stored row has a non-NULL"
    echo "fraud_score and is_suspicious = (fraud_score >= 0.9); with the statement trigger alone the"
    echo "alerts are exactly the rows with \`gpu_score('fraud', ARRAY[...]) >= 0.9\`; with both, the"
    echo "alerts are exactly the rows flagged is_suspicious, with the same score."
} > "$RESULT"

echo
echo "== results: $RESULT"
echo
cat "$RESULT"
