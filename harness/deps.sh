#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what a run needs from Debian, or say exactly what to install.
set -eu

# kernel tree and build (ccache: one compile cache for every build directory;
# lz4 compresses the kernel, kunitconfig says why);
# QEMU; the mkfs tools and faketime the image scripts use; hyperfine for make bench;
# lcov (genhtml) for make coverage; distcc for DISTCC_HOSTS (and its test)
PACKAGES="linux-source-6.12 qemu-system-x86 gcc make flex bison bc libelf-dev libssl-dev
cpio xz-utils lz4 python3 git ccache busybox-static e2fsprogs udftools faketime jfsutils reiserfsprogs ocfs2-tools f2fs-tools
hyperfine lcov distcc"
# LAVA (about 200 packages): lava-dispatcher (lava-run) and lava-common (the job
# schema) for RUNNER=lava; lava-server and PostgreSQL for make lava-server.  Every
# target but make run asks for them ("deps.sh lava"); make run only with RUNNER=lava.
LAVA="lava-dispatcher lava-common lava-server postgresql"
if [ "${1:-}" = lava ] || [ "${RUNNER:-}" = lava ]; then
	PACKAGES="$PACKAGES $LAVA"
fi

# One dpkg-query for all (one each took 0.8 s of every make run); a package
# it does not know is left out of its answer.
# shellcheck disable=SC2086
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PACKAGES 2>/dev/null || true)
missing=
for p in $PACKAGES; do
	case "
$installed" in *"
$p ii"*) ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: error: missing packages:$missing" >&2
	echo "deps.sh: as root, run: apt-get update && $line" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
if ! apt-get install -y -qq --no-install-recommends $missing >&2; then
	echo "deps.sh: error: could not install:$missing" >&2
	exit 1
fi
