#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Keep the kernel tree at exactly: pristine linux-source-6.12 + patches/series
# + kunit-tests/ + $EXTRA_PATCHES.
#
# The tree is extracted once and committed to a private git repository
# (tag "pristine").  The wanted state is built as a git tree object in a
# scratch index, so a patch that does not apply fails before the work tree is
# touched.  "git reset --hard" then rewrites only the files whose content
# differs, which keeps make's mtimes, and so the rebuild, incremental; it also
# repairs whatever an interrupted run left half-written.
#
# usage: tree.sh sync    bring the tree to the wanted state, print its tree id
#        tree.sh path    print the tree's path
#        tree.sh version print the Debian version the tree was extracted from
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
WORKDIR=${WORKDIR:-/var/tmp/fs-kunit}
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
PACKAGE=${KERNEL_PACKAGE:-linux-source-6.12}
TREE=$WORKDIR/$PACKAGE
EXTRA_PATCHES=${EXTRA_PATCHES:-}

die() { echo "tree.sh: error: $*" >&2; exit 1; }
g() { git -C "$TREE" -c user.name=fs-kunit -c user.email=fs-kunit@localhost \
	-c core.autocrlf=false -c gc.auto=0 "$@"; }

installed_version() {
	dpkg-query -W -f='${Version}' "$PACKAGE" 2>/dev/null || echo unknown
}

extract() {
	[ -r "$TARBALL" ] || die "$TARBALL not found: install $PACKAGE (make deps)"
	version=$(installed_version)
	echo "tree.sh: extracting $PACKAGE $version into $TREE (once)" >&2
	rm -rf "$TREE.new"
	mkdir -p "$TREE.new"
	tar -xf "$TARBALL" -C "$TREE.new" --strip-components=1
	# Debian's top-level .gitignore ignores everything: add with -f.
	git -C "$TREE.new" init -q
	git -C "$TREE.new" -c user.name=fs-kunit -c user.email=fs-kunit@localhost \
		-c gc.auto=0 add -f -A
	git -C "$TREE.new" -c user.name=fs-kunit -c user.email=fs-kunit@localhost \
		commit -q -m "$PACKAGE $version (pristine)"
	git -C "$TREE.new" tag pristine
	echo "$version" > "$TREE.new/.git/fs-kunit-version"
	# Renamed into place only when complete: a half-extracted tree never
	# looks like a tree.
	rm -rf "$TREE"
	mv "$TREE.new" "$TREE"
}

ensure_tree() {
	mkdir -p "$WORKDIR"
	if [ ! -f "$TREE/.git/fs-kunit-version" ] ||
	   ! g rev-parse -q --verify refs/tags/pristine >/dev/null; then
		extract
	elif [ "$(cat "$TREE/.git/fs-kunit-version")" != "$(installed_version)" ] &&
	     [ "$(installed_version)" != unknown ]; then
		echo "tree.sh: $PACKAGE moved to $(installed_version): extracting again" >&2
		extract
	fi
	# A run killed inside git leaves its lock behind; we hold the workdir lock.
	rm -f "$TREE/.git/index.lock"
}

series() {
	# patches/series: a patch a line, in order, then the kunit-tests/ files it
	# adds (for make series); blank lines and #comments skipped.
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$top/patches/series" |
		while read -r p _files; do echo "$top/patches/$p"; done
}

apply_patches() {
	for p in "$@"; do
		case $p in /*) ;; *) p=$(pwd)/$p ;; esac
		[ -r "$p" ] || die "patch $p not found"
		if ! out=$(GIT_INDEX_FILE=$idx g apply --cached --whitespace=nowarn "$p" 2>&1); then
			echo "$out" >&2
			die "patch $(basename "$p") does not apply to $PACKAGE $version; the tree is left as it was"
		fi
	done
}

wanted_tree() {
	version=$(cat "$TREE/.git/fs-kunit-version")
	idx="$TREE/.git/fs-kunit-scratch-index"
	rm -f "$idx"
	GIT_INDEX_FILE=$idx g read-tree pristine
	apply_patches $(series)
	# Test sources are copied as blobs at their kernel paths.
	(cd "$top/kunit-tests" && find . -type f ! -name '*~' | sed 's|^\./||' | sort) |
	while read -r f; do
		blob=$(g hash-object -w --path "$f" "$top/kunit-tests/$f") || exit 1
		printf '100644 %s\t%s\n' "$blob" "$f"
	done | GIT_INDEX_FILE=$idx g update-index --add --index-info
	# Extra patches last: a regression patch may break a fixture too.
	apply_patches $EXTRA_PATCHES
	GIT_INDEX_FILE=$idx g write-tree
	rm -f "$idx"
}

# A hash of everything the wanted tree is made from.
inputs_hash() {
	{
		for p in $(series) $EXTRA_PATCHES; do echo "$p"; cat "$p"; done
		(cd "$top/kunit-tests" && find . -type f ! -name '*~' -print0 | sort -z |
			xargs -0 sha256sum)
	} | sha256sum | cut -c1-64
}

case ${1:-sync} in
sync)
	# One run per WORKDIR changes the tree: a caller that holds run.py's lock
	# says so; anyone else (make regressions' last restore, make tree) waits
	# for it instead of changing the tree under another run's build.
	if [ -z "${FS_KUNIT_LOCKED:-}" ]; then
		mkdir -p "$WORKDIR"
		exec 9>"$WORKDIR/.lock"
		flock 9
	fi
	ensure_tree
	# Fast path: the last complete sync had the same inputs, and no tracked
	# file was touched since.  The record is removed before any change and
	# written after a complete one, so an interrupted sync takes the slow path.
	record=$TREE/.git/fs-kunit-synced
	inputs=$(inputs_hash)
	if [ -f "$record" ] && [ "$(cat "$record")" = "$inputs $(g rev-parse -q --verify 'HEAD^{tree}')" ] &&
	   g diff-files --quiet; then
		cut -d' ' -f2 "$record"
		exit 0
	fi
	rm -f "$record"
	tree=$(wanted_tree)
	if [ "$(g rev-parse -q --verify 'HEAD^{tree}')" != "$tree" ] ||
	   [ -n "$(g status --porcelain --untracked-files=all --ignored=matching | head -1)" ]; then
		commit=$(echo "pristine + series + tests ${EXTRA_PATCHES:++ extra}" |
			g commit-tree "$tree" -p pristine)
		g reset -q --hard "$commit"
		g clean -q -ffdx
	fi
	echo "$inputs $tree" > "$record"
	echo "$tree"
	;;
path) echo "$TREE" ;;
version) ensure_tree; cat "$TREE/.git/fs-kunit-version" ;;
*) die "unknown command $1" ;;
esac
