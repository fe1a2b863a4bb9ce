#!/usr/bin/env bash
# tests/t/run.sh: run the TAP tests tests/t/*.pl (or those named) against the
# installed extension, each in its own throwaway cluster made by
# PostgreSQL::Test::Cluster (PGXS ships it).  Run as root or as postgres:
# initdb refuses root, so the tests run as user postgres in a copy of tests/
# that postgres can write to.  Prints prove's verbose TAP output.
#
#   bash tests/t/run.sh                     every test
#   bash tests/t/run.sh 010_score_table.pl  one test
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
pgxs=$(dirname "$(pg_config --pgxs)")/..
bindir=$(pg_config --bindir)
work=${GS_TAP_DIR:-$(mktemp -d /tmp/pg_gpuscore-tap.XXXXXX)}

mkdir -p "$work"
rm -rf "$work/t" "$work/fixtures" "$work/mock_provider"
cp -r "$root/tests/t" "$work/t"
cp -r "$root/tests/fixtures" "$work/fixtures"
# the CPU mock of the GPU provider (built by make), for the GPU paths
mkdir -p "$work/mock_provider"
cp "$root"/tests/mock_provider/*.so "$work/mock_provider/" 2>/dev/null || true
if [ "$(id -u)" = 0 ]; then
    chown -R postgres "$work"
    run_as=(runuser -u postgres --)
else
    run_as=()
fi

# Expand t/*.pl inside $work (the glob is relative to it, not to the caller's
# directory); fail when there is nothing to run rather than hand prove a
# literal pattern.
cd "$work"
tests=()
for t in "${@:-}"; do
    [ -n "$t" ] && tests+=("t/$(basename "$t")")
done
if [ ${#tests[@]} -eq 0 ]; then
    shopt -s nullglob
    tests=(t/*.pl)
    shopt -u nullglob
fi
if [ ${#tests[@]} -eq 0 ]; then
    echo "not ok - no TAP test found in $work/t"
    exit 1
fi
"${run_as[@]}" env PATH="$bindir:$PATH" TESTDIR="$work" PG_REGRESS="$pgxs/test/regress/pg_regress" \
    GS_FIXTURES="$work/fixtures" \
    prove -v -I "$pgxs/test/perl" -I "$work/t" "${tests[@]}"
