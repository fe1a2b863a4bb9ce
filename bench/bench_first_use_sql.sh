#!/usr/bin/env bash
# bench_first_use_sql.sh: inside the server, what the first gpu_score of a
# new session pays for a stored tree-ensemble model: reading the image of its
# forest that gpu_load_model stored (what sessions do), against parsing the
# model's bytes (the same model with its image removed, as for a model
# stored before images could hold it).  The companion of bench_first_use.sh
# (which measures the core alone, without a server).
#
#   bash bench/bench_first_use_sql.sh MODEL...
#
# A throwaway cluster (.ci/lib.sh); each model is loaded, then each of
# BENCH_REPEATS (default 7) new sessions times (psql \timing) its first
# gpu_score of one row of zeros; median.  Prints Markdown on stdout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
repeats=${BENCH_REPEATS:-7}
[ $# -ge 1 ] || { echo "usage: $0 MODEL..." >&2; exit 2; }
export GS_TMP=${GS_TMP:-/tmp/pg_gpuscore_bench_first_use}
export GS_PORT=${GS_PORT:-54393}
# shellcheck source=/dev/null
source "$root/.ci/lib.sh"
# shellcheck source=/dev/null
source "$here/sql_common.sh"

build_install >&2
rm -rf "$GS_TMP"
start_cluster >&2
bpsql -c "CREATE EXTENSION pg_gpuscore"
mkdir -p "$GS_TMP/models"

# Median milliseconds of the first gpu_score of model $1 in new sessions.
first_use_ms() {
    local name=$1 zeros times=() _
    zeros=$(bpsql -c "SELECT 'ARRAY[' || string_agg('0', ',') || ']::real[]'
                        FROM gpu_models, generate_series(1, n_features) WHERE name = '$name'")
    for _ in $(seq 1 "$repeats"); do
        times+=("$(bpsql -c '\timing on' -c "SELECT gpu_score('$name', $zeros) IS NOT NULL" |
                    sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')")
    done
    median "${times[@]}"
}

echo "### First gpu_score of a new session: stored image vs parse (median of $repeats sessions)"
echo
echo "| model | file | size | with image | parsed | parsed / image |"
echo "|---|---|---:|---:|---:|---:|"
k=0
for f in "$@"; do
    k=$((k + 1))
    name="m$k"
    cp "$f" "$GS_TMP/models/"
    chmod a+r "$GS_TMP/models/$(basename "$f")"
    bpsql -c "SELECT gpu_load_model('$name', pg_read_binary_file('$GS_TMP/models/$(basename "$f")')) > 0" >/dev/null
    [ "$(bpsql -c "SELECT compiled IS NOT NULL FROM gpu_model_store WHERE name = '$name'")" = t ] ||
        echo "note: $(basename "$f") has no stored image" >&2
    img=$(first_use_ms "$name")
    bpsql -c "UPDATE gpu_model_store SET compiled = NULL WHERE name = '$name'" >/dev/null
    parsed=$(first_use_ms "$name")
    awk -v m="$(basename "${f%.*}")" -v f="$(basename "$f")" -v s="$(du -h "$f" | cut -f1)" \
        -v i="$img" -v p="$parsed" \
        'BEGIN { printf "| %s | `%s` | %s | %.1f ms | %.1f ms | %.1fx |\n", m, f, s, i, p, p / i }'
done
