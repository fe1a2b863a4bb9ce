# bench/sql_common.sh: shared parts of the in-database benchmarks
# (bench_sql.sh, bench_batch_paths.sh); sourced after .ci/lib.sh.
#
# bpsql, median, feature_list, feature_expr, bench_rounds, bench_table:
#   helpers below.
# make_bench_tx ROWS [JOBS]: creates bench_tx(id bigint, f1..f30 real) with
#   ROWS rows drawn in SQL from the distributions of make_models.py (each
#   value NULL with probability 0.05), VACUUM ANALYZE, and the timing
#   functions bench_cpu() and bench_time(q) (see bench_sql.sh).  With JOBS
#   (default 1, at most 14) sessions filling id ranges at once, job k seeded
#   with setseed(0.42 - 0.1 k): one job gives the same table as always.
#   Sets COLS ("f1, ..., f30"), SUMEXPR ("f1+...+f30") and TABLE_INFO.

# psql against the throwaway cluster: no psqlrc, quiet, unaligned, stop on error.
bpsql() {
    psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"
}

# Median of the numbers given as arguments.
median() {
    printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
        if (NR % 2) print v[(NR+1)/2]; else printf "%.6f\n", (v[NR/2]+v[NR/2+1])/2 }'
}

# Comma-separated list "f1, f2, ..., f30" with the given separator.
feature_list() {
    local sep=$1 out="" i
    for i in $(seq 1 30); do
        out+="${out:+$sep}f$i"
    done
    printf '%s' "$out"
}

# SQL expression of feature i, drawn as in make_models.py, NULL 5% of the time.
feature_expr() {
    local i=$1 v
    if [ "$i" -le 10 ]; then v="sqrt(-2*ln(1-random()))*cos(2*pi()*random())"
    elif [ "$i" -le 20 ]; then v="random()*10-5"
    elif [ "$i" -le 25 ]; then v="-100*ln(1-random())"
    else v="floor(random()*12)"
    fi
    printf 'CASE WHEN random() < 0.05 THEN NULL ELSE (%s)::real END' "$v"
}

# Create bench_tx and the timing functions (see the header).
make_bench_tx() {
    local BENCH_ROWS=$1 JOBS=${2:-1} k lo hi pids=() failed=0
    [ "$JOBS" -ge 1 ] && [ "$JOBS" -le 14 ] || { echo "make_bench_tx: JOBS must be 1..14" >&2; return 1; }
    COLS=$(feature_list ", ")
    CLK_TCK=$(getconf CLK_TCK)
    SUMEXPR=$(feature_list "+")
    EXPRS=""
    for i in $(seq 1 30); do
        EXPRS+=", $(feature_expr "$i")"
    done

    echo "== creating bench_tx with $BENCH_ROWS rows ($JOBS job(s))"
    t0=$(date +%s%N)
    bpsql <<SQL
CREATE EXTENSION pg_gpuscore;
CREATE TABLE bench_tx (id bigint, $(feature_list " real, ") real);
-- bench_cpu(): CPU seconds (user + system) this backend has used so far,
-- from /proc/self/stat (fields 14 and 15, in clock ticks)
CREATE FUNCTION bench_cpu() RETURNS float8
LANGUAGE sql AS \$\$
    SELECT (f[12]::bigint + f[13]::bigint)::float8 / $CLK_TCK
      FROM (SELECT string_to_array(substring(pg_read_file('/proc/self/stat') FROM '\) (.*)\$'), ' ') AS f) s
\$\$;
-- bench_time(q): wall seconds to run q in this backend, the CPU seconds the
-- backend used meanwhile, and q's one-row result as text
CREATE FUNCTION bench_time(q text, OUT secs float8, OUT cpu_secs float8, OUT result text)
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz;
    c0 float8;
BEGIN
    c0 := bench_cpu();
    t0 := clock_timestamp();
    EXECUTE 'SELECT s::text FROM (' || q || ') s' INTO result;
    secs := extract(epoch FROM clock_timestamp() - t0);
    cpu_secs := bench_cpu() - c0;
END
\$\$;
SQL
    for ((k = 0; k < JOBS; k++)); do
        lo=$((BENCH_ROWS * k / JOBS + 1))
        hi=$((BENCH_ROWS * (k + 1) / JOBS))
        bpsql >/dev/null <<SQL &
SELECT setseed(0.42 - 0.1 * $k);
INSERT INTO bench_tx SELECT i$EXPRS FROM generate_series($lo, $hi) i;
SQL
        pids+=($!)
    done
    for k in "${pids[@]}"; do
        wait "$k" || failed=1
    done
    [ "$failed" = 0 ] || { echo "make_bench_tx: filling bench_tx failed" >&2; return 1; }
    bpsql -c "VACUUM ANALYZE bench_tx"
    t1=$(date +%s%N)
    TABLE_INFO=$(bpsql -c "SELECT count(*) || ' rows, ' || pg_size_pretty(pg_relation_size('bench_tx')) || ', '
        || round(100.0 * avg(num_nulls($COLS)) / 30, 2) || '% NULL features' FROM bench_tx")
    echo "== bench_tx: $TABLE_INFO (built in $(( (t1 - t0) / 1000000 )) ms)"
}

# bench_rounds: BENCH_REPEATS rounds of the queries Q[name] in the order of
# ORDER, alternating, each timed in the server by bench_time after the
# settings SESSION; appends each time to T[name] and keeps its last result
# in R[name] (Q, ORDER, SESSION, T and R are the caller's: declare -A Q T R).
bench_rounds() {
    local round q out
    for round in $(seq 1 "$BENCH_REPEATS"); do
        for q in "${ORDER[@]}"; do
            out=$(bpsql -F ' ' -c "$SESSION" -c "SELECT secs, result FROM bench_time(\$q\$${Q[$q]}\$q\$)")
            # shellcheck disable=SC2004,SC2034  # the caller's associative arrays
            T[$q]+=" ${out%% *}"
            # shellcheck disable=SC2004,SC2034
            R[$q]=${out#* }
        done
        echo "   round $round done" >&2
    done
}

# bench_table: the Markdown table of each query's median time (T, ORDER) and
# that over the median of ORDER's first query.
bench_table() {
    local base m q
    echo "| query | median s | / ${ORDER[0]} |"
    echo "| --- | ---: | ---: |"
    # shellcheck disable=SC2086
    base=$(median ${T[${ORDER[0]}]})
    for q in "${ORDER[@]}"; do
        # shellcheck disable=SC2086
        m=$(median ${T[$q]})
        printf '| %s | %.3f | %.2f |\n' "$q" "$m" "$(echo "$m / $base" | bc -l)"
    done
}

