#!/usr/bin/env bash
# tests/layout/check_includes.sh: the include direction of the scoring core
# (docs/architecture.md), checked over every #include "..." of src/core and
# cuda/; prints TAP, one line per rule, and the offending includes.
#
#   model -> frontend -> a format -> common -> forest / mlp -> top (gs_status,
#   cat_names) / util
#
# A format never includes another format; forest/ and mlp/ (the engines)
# never include a frontend; cuda/ includes only forest/ and mlp/ headers of
# the core, through the include path (never ../src/core).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
core=$root/src/core
n=0
failed=0

# layer of a path relative to src/core
layer() {
    case "$1" in
        model.*) echo model ;;
        gs_status.*|cat_names.*) echo top ;;
        util/*) echo util ;;
        forest/*) echo forest ;;
        mlp/*) echo mlp ;;
        frontend/frontend.*) echo frontend ;;
        frontend/common/*) echo common ;;
        frontend/*/*) f=${1#frontend/}; echo "format:${f%%/*}" ;;
        *) echo unknown ;;
    esac
}

# may a file of layer $1 include one of layer $2?
allowed() {
    local from=$1 to=$2
    [ "$from" = "$to" ] && return 0
    case "$from:$to" in
        *:top|*:util) return 0 ;;
        model:frontend|model:forest|model:mlp) return 0 ;;
        frontend:format:*|frontend:common|frontend:forest|frontend:mlp) return 0 ;;
        format:*:common|format:*:forest|format:*:mlp) return 0 ;;
        common:forest|common:mlp) return 0 ;;
        top:top|util:util) return 0 ;;
    esac
    return 1
}

bad=()
unknown=()
while IFS= read -r file; do
    rel=${file#"$core"/}
    dir=$(dirname "$rel")
    from=$(layer "$rel")
    [ "$from" = unknown ] && unknown+=("$rel")
    while IFS= read -r inc; do
        # a bare name is the including file's folder first, then src/core
        if [[ "$inc" != */* ]] && [ -e "$core/$dir/$inc" ]; then
            target=$dir/$inc
            [ "$dir" = . ] && target=$inc
        else
            target=$inc
        fi
        [ -e "$core/$target" ] || continue     # not a core header (generated pb-c included by its folder)
        to=$(layer "$target")
        allowed "$from" "$to" || bad+=("$rel includes $inc ($from -> $to)")
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(find "$core" -name '*.[ch]' ! -name 'onnx.pb-c.*' | sort)

n=$((n + 1))
if [ ${#unknown[@]} -eq 0 ]; then
    echo "ok $n - every file of src/core is in a layer (model, frontend, a format, common, forest, mlp, util, top)"
else
    printf '#   %s\n' "${unknown[@]}"
    echo "not ok $n - files of src/core outside every layer: ${#unknown[@]}"; failed=$((failed + 1))
fi
n=$((n + 1))
if [ ${#bad[@]} -eq 0 ]; then
    echo "ok $n - includes in src/core run one way (model -> frontend -> format -> common -> forest/mlp -> top/util)"
else
    printf '#   %s\n' "${bad[@]}"
    echo "not ok $n - includes against the layers: ${#bad[@]}"; failed=$((failed + 1))
fi

# cuda/: only forest/ and mlp/ of the core, through the include path
cbad=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$root"/cuda/*.cu "$root"/cuda/*.h |
    sed -n 's/^\([^:]*:[0-9]*\):.*include[[:space:]]*"\([^"]*\)".*/\1 \2/p' |
    while read -r where inc; do
        case "$inc" in
            ../*|*src/core*) echo "$where $inc" ;;
            */*) case "$inc" in forest/*|mlp/*) ;; *) echo "$where $inc" ;; esac ;;
        esac
    done)
n=$((n + 1))
if [ -z "$cbad" ]; then
    echo "ok $n - cuda/ includes only forest/ and mlp/ headers of the core, through the include path"
else
    printf '#   %s\n' "$cbad"
    echo "not ok $n - cuda/ includes other core headers or by relative path"; failed=$((failed + 1))
fi
echo "1..$n"
exit $((failed > 0))
