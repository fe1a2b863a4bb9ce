#!/usr/bin/env bash
# tests/gpu/device_tree.sh: fit the GPU kit into run's 64 MiB.
#
# `run` sends the tracked tree (55 MB, 48 of them fixtures) plus what carry
# names; with .device (~48 MB) that is too much.  So the tree travels packed
# inside .device, and git is told, for the calls only, that nothing is
# tracked and everything is ignored:
#
#   bash tests/gpu/device_tree.sh pack      # .device/tree.txz: every tracked file
#                                           # as it is in the working tree, and the
#                                           # built mock provider (~9 MB)
#   bash tests/gpu/device_tree.sh hide      # before the run calls
#   ... run with carry [".device"], a command starting `tar xJf .device/tree.txz && ...`
#   bash tests/gpu/device_tree.sh restore   # right after them
#
# hide keeps a copy of the index (.git/gs-device-index) and puts it back on
# restore, staged changes included; it touches no file of the working tree.
# `status` prints which state the checkout is in.  prepare_device.sh runs pack.
set -euo pipefail
cd "$(dirname "$0")/../.."
GIT_DIR=$(git rev-parse --git-dir)
SAVED=$GIT_DIR/gs-device-index
EXCLUDE=$GIT_DIR/info/exclude
MOCK=tests/mock_provider/pg_gpuscore_mock_provider.so
MARK='# pg_gpuscore tests/gpu/device_tree.sh hide: ignore everything'

case "${1:-}" in
pack)
	mkdir -p .device
	# and the CPU mock of the provider (built, not tracked), which the
	# pg_regress suite of pg_checks.sh loads
	{ git ls-files -z; [ ! -f "$MOCK" ] || printf '%s\0' "$MOCK"; } | tar cJf .device/tree.txz --null -T -
	du -h .device/tree.txz
	;;
hide)
	[ ! -e "$SAVED" ] || { echo "device_tree: already hidden (restore first)" >&2; exit 1; }
	cp "$GIT_DIR/index" "$SAVED"
	git rm -r -q --cached .
	mkdir -p "$GIT_DIR/info"
	printf '%s\n*\n' "$MARK" >> "$EXCLUDE"
	if [ -n "$(git ls-files)" ] || [ -n "$(git ls-files --others --exclude-standard)" ]; then
		echo "device_tree: files still visible to git after hide; restoring" >&2
		"$0" restore
		exit 1
	fi
	echo "hidden: run now sends only what carry names; restore with: bash $0 restore"
	;;
restore)
	[ -e "$SAVED" ] || { echo "device_tree: nothing to restore" >&2; exit 1; }
	cp "$SAVED" "$GIT_DIR/index" && rm "$SAVED"
	if [ -e "$EXCLUDE" ]; then
		# drop the mark and the '*' line after it
		awk -v m="$MARK" '$0 == m { skip = 1; next } skip && $0 == "*" { skip = 0; next } { skip = 0; print }' \
			"$EXCLUDE" > "$EXCLUDE.tmp" && mv "$EXCLUDE.tmp" "$EXCLUDE"
	fi
	git status --short | head -5
	echo "restored"
	;;
status)
	if [ -e "$SAVED" ]; then echo "hidden"; else echo "normal"; fi
	;;
*)
	echo "usage: $0 pack | hide | restore | status" >&2
	exit 2
	;;
esac
