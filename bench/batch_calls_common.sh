# bench/batch_calls_common.sh: the queries and the report of the batched
# gpu_score calls benchmark, shared by bench/bench_batch_calls.sh (this
# machine) and bench/gpu/bench_batch_calls_gpu.sh (the GPU kit); sourced
# after bench/sql_common.sh, with bench_tx made (make_bench_tx) and bpsql
# pointing at the cluster.
#
# batch_calls_setup             the timing function bench_exec and the
#                               INSERT target bench_out
# batch_calls_run MODEL MODES   time every shape and variant of MODEL: one
#                               "shape variant mode run secs result" line each
# batch_calls_table MODEL OUT   the Markdown table of those lines
#
# Shapes (each returns a result every variant must equal):
#   agg    SELECT count(*) FILTER (WHERE gpu_score(m, ARRAY[f1, ..., f30]) > 0.9) FROM bench_tx
#   insert INSERT INTO bench_out SELECT id, gpu_score(m, ARRAY[...]) FROM bench_tx
#          (bench_out truncated before each run; result: rows and the float8
#          sum of the scores, rounded)
#   top    SELECT id, gpu_score(m, ARRAY[...]) AS p FROM bench_tx ORDER BY p DESC, id LIMIT 100
#          (result: md5 of the rows)
# Variants:
#   plain    the same query with the score replaced by the mean of the 30
#            features (NULL as 0), which reads the same columns: the query
#            without scoring
#   per_row  pg_gpuscore.batch_calls = off: gpu_score row by row
#   batched  pg_gpuscore.batch_calls = on (the default): the GpuScore node
#   query    the same through gpu_score_query (its scoring runs in the
#            calling backend: serial mode only)
# MODES: "serial" and "wN" (N parallel workers per Gather; agg and top only,
# since PostgreSQL 15 runs INSERT ... SELECT serially; per_row and query
# serial only).  BENCH_REPEATS rounds (per_row BENCH_PERROW_REPEATS, default
# 1: row by row is slow); each round runs every query once, in turn, in one
# session, after a warm-up.  BENCH_DEVICE (default cpu) is
# pg_gpuscore.device; GS_SET_PROVIDER, if set, a SET of pg_gpuscore.provider.

batch_calls_setup() {
    local i
    # the query without scoring: the mean of the features, NULL as 0
    PLAINEXPR=""
    for i in $(seq 1 30); do
        PLAINEXPR+="${PLAINEXPR:++}coalesce(f$i, 0)"
    done
    bpsql <<'SQL'
-- bench_exec(q, check): wall seconds to run the statement q in this
-- backend, the number of rows it processed and, after it, check's result
CREATE FUNCTION bench_exec(q text, check_q text, OUT secs float8, OUT result text)
LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    n bigint;
    c text;
BEGIN
    t0 := clock_timestamp();
    EXECUTE q;
    GET DIAGNOSTICS n = ROW_COUNT;
    secs := extract(epoch FROM clock_timestamp() - t0);
    EXECUTE check_q INTO c;
    result := n || '/' || c;
END
$$;
CREATE TABLE bench_out (id bigint, p real);
SQL
}

# The query of shape $1, variant $2 for model $3.
batch_calls_query() {
    local shape=$1 variant=$2 m=$3 score
    case $variant in
        plain) score="(($PLAINEXPR) / 30)::real" ;;
        *) score="gpu_score('$m', ARRAY[$COLS])" ;;
    esac
    case $shape.$variant in
        agg.query) echo "SELECT count(*) FILTER (WHERE score > 0.9) FROM gpu_score_query('$m', 'SELECT id, $COLS FROM bench_tx')" ;;
        agg.*) echo "SELECT count(*) FILTER (WHERE $score > 0.9) FROM bench_tx" ;;
        insert.query) echo "INSERT INTO bench_out SELECT id, score FROM gpu_score_query('$m', 'SELECT id, $COLS FROM bench_tx')" ;;
        insert.*) echo "INSERT INTO bench_out SELECT id, $score FROM bench_tx" ;;
        top.query) echo "SELECT md5(string_agg(id || ':' || p, ',')) FROM (SELECT id, score AS p FROM gpu_score_query('$m', 'SELECT id, $COLS FROM bench_tx') ORDER BY p DESC, id LIMIT 100) s" ;;
        top.*) echo "SELECT md5(string_agg(id || ':' || p, ',')) FROM (SELECT id, $score AS p FROM bench_tx ORDER BY p DESC, id LIMIT 100) s" ;;
    esac
}

# One timed statement as a line of the script: "shape variant mode run secs result".
batch_calls_timed() {
    local shape=$1 variant=$2 mode=$3 run=$4 m=$5 q setting=""
    q=$(batch_calls_query "$shape" "$variant" "$m")
    [ "$variant" = per_row ] && setting="SET pg_gpuscore.batch_calls = off;"
    if [ "$shape" = insert ]; then
        echo "TRUNCATE bench_out; $setting SELECT '$shape', '$variant', '$mode', $run, secs, result FROM bench_exec(\$q\$$q\$q\$, 'SELECT round(sum(p::float8)::numeric, 1) FROM bench_out'); RESET pg_gpuscore.batch_calls;"
    else
        echo "$setting SELECT '$shape', '$variant', '$mode', $run, secs, result FROM bench_time(\$q\$$q\$q\$); RESET pg_gpuscore.batch_calls;"
    fi
}

batch_calls_run() {
    local m=$1 modes=$2 script r mode w shape v
    script="SET jit = off;
SET pg_gpuscore.device = '${BENCH_DEVICE:-cpu}';
${GS_SET_PROVIDER:-}
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 0;
SELECT 'warmup', 'plain', 'serial', 0, secs, result FROM bench_time(\$q\$$(batch_calls_query agg plain "$m")\$q\$);
SELECT 'warmup', 'batched', 'serial', 0, secs, result FROM bench_time(\$q\$SELECT gpu_score('$m', ARRAY[$COLS]) FROM bench_tx LIMIT 1000\$q\$);
"
    for r in $(seq 1 "${BENCH_REPEATS:-3}"); do
        for mode in $modes; do
            w=0
            [ "$mode" != serial ] && w=${mode#w}
            script+="SET max_parallel_workers_per_gather = $w;
"
            for shape in agg insert top; do
                [ "$mode" != serial ] && [ "$shape" = insert ] && continue
                for v in plain per_row batched query; do
                    if [ "$mode" != serial ] && { [ "$v" = per_row ] || [ "$v" = query ]; }; then continue; fi
                    [ "$v" = per_row ] && [ "$r" -gt "${BENCH_PERROW_REPEATS:-1}" ] && continue
                    script+="$(batch_calls_timed "$shape" "$v" "$mode" "$r" "$m")
"
                done
            done
        done
        script+="SELECT 'round', '$r', 'done', $r, 0, '';
"
    done
    printf '%s' "$script" | bpsql -F ' '
}

# The table: per shape and mode, each variant's median, rows/s, and its time
# against the plain query and the serial gpu_score_query of the same shape.
batch_calls_table() {
    local m=$1 out=$2 shape mode v med base qbase runs res
    echo "| shape | mode | variant | median s | rows/s | vs plain (same mode) | speed vs gpu_score_query (serial) | runs (s) | result |"
    echo "|---|---|---|---:|---:|---:|---:|---|---|"
    for shape in agg insert top; do
        # shellcheck disable=SC2046
        qbase=$(median $(awk -v s=$shape '$1 == s && $2 == "query" && $3 == "serial" {print $5}' <<<"$out"))
        for mode in $(awk -v s=$shape '$1 == s {print $3}' <<<"$out" | awk '!seen[$0]++'); do
            # shellcheck disable=SC2046
            base=$(median $(awk -v s=$shape -v m=$mode '$1 == s && $2 == "plain" && $3 == m {print $5}' <<<"$out"))
            for v in plain per_row batched query; do
                runs=$(awk -v s=$shape -v m=$mode -v v=$v '$1 == s && $2 == v && $3 == m {printf "%s%.2f", (n++ ? " " : ""), $5}' <<<"$out")
                [ -n "$runs" ] || continue
                # shellcheck disable=SC2046
                med=$(median $(awk -v s=$shape -v m=$mode -v v=$v '$1 == s && $2 == v && $3 == m {print $5}' <<<"$out"))
                res=$(awk -v s=$shape -v m=$mode -v v=$v '$1 == s && $2 == v && $3 == m {r=$6} END {print r}' <<<"$out")
                awk -v sh=$shape -v mo=$mode -v v=$v -v s="$med" -v b="$base" -v q="$qbase" -v n="$BENCH_ROWS" \
                    -v runs="$runs" -v res="$res" \
                    'BEGIN { printf "| %s | %s | %s | %.2f | %.0f | %.2fx | %.2fx | %s | `%s` |\n",
                             sh, mo, v, s, n / s, s / b, q / s, runs, substr(res, 1, 20) }'
            done
        done
    done
}

# Every variant of a shape that scores must give the same result (exit
# status 1 if not).
batch_calls_check() {
    local out=$1 shape bad=0 n
    for shape in agg insert top; do
        n=$(awk -v s=$shape '$1 == s && $2 != "plain" {print $6}' <<<"$out" | sort -u | wc -l)
        if [ "$n" -ne 1 ]; then
            echo "**MISMATCH: the variants of $shape gave $n different results**"
            bad=1
        fi
    done
    return $bad
}
