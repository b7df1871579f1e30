#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The UDF images of the udf_super suite (fs/udf/super_kunit_images.h).
#
# usage: make-udf.sh VARIANT OUT
#   valid            mkudffs, UDF 2.01, hard-disk layout, 2048-byte blocks, 4 MiB
#                    (the RAM disk's size, so the anchor at the last block is found)
#   write-rev        valid + LVID minUDFWriteRev 0x0250 (> UDF_MAX_WRITE_VERSION 0x0201)
#   read-rev         valid + LVID minUDFReadRev 0x0300 (> UDF_MAX_READ_VERSION 0x0260)
#   ro-partition     valid + Partition Descriptor accessType 1 (read-only); not
#                    mkudffs --read-only, which also write-protects the logical
#                    volume (a separate refusal, udf_verify_domain_identifier())
#   root-unreadable  valid + the FSD's root directory ICB moved to a zero block:
#                    the mount fails after the LVID was opened
#   no-fileset       valid + the FSD's tag identifier broken: the mount fails
#                    before the LVID is opened
#   bad-unalloc-table  valid with an unallocated space table (mkudffs
#                    --space=unalloctable) whose first extent is not a whole
#                    number of blocks: read-only only
#   ro-partition-unreadable-table  a read-only partition (accessType 1) with an
#                    unallocated space table at a zero block: a read-only
#                    mount never loads it
#   vat              a CD-R: mkudffs --media-type=cdr, a Virtual Allocation
#                    Table (a virtual partition, read-only to the driver) at the
#                    last block, where the driver looks for it
#   vat-read-rev     vat + LVID minUDFReadRev 0x0300: a read-only mount is
#                    refused after the VAT's inode was read
# Edits go through udfedit.py, which recomputes tag checksums and CRCs.
# Reproducible: mkudffs ignores SOURCE_DATE_EPOCH, so the clock is frozen.
set -eu
variant=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -f "$out"
truncate -s 4M "$out"
mk() {
	faketime -f '2020-01-01 00:00:00' mkudffs --media-type="${media:-hd}" --blocksize=2048 \
		--udfrev=2.01 --uuid=6e1f5c3a00000001 --label=udf_kunit "$@" "$out" >/dev/null
}
case $variant in
valid) mk ;;
write-rev) mk; "$here/udfedit.py" "$out" write-rev=0x0250 ;;
read-rev) mk; "$here/udfedit.py" "$out" read-rev=0x0300 ;;
ro-partition) mk; "$here/udfedit.py" "$out" access-type=1 ;;
root-unreadable) mk; "$here/udfedit.py" "$out" root-unreadable ;;
no-fileset) mk; "$here/udfedit.py" "$out" no-fileset ;;
bad-unalloc-table) mk --space=unalloctable; "$here/udfedit.py" "$out" bad-unalloc-table ;;
ro-partition-unreadable-table)
	mk --space=unalloctable
	"$here/udfedit.py" "$out" access-type=1
	"$here/udfedit.py" "$out" unalloc-table-unreadable ;;
vat) media=cdr mk --minblocks=2048 ;;
vat-read-rev) media=cdr mk --minblocks=2048; "$here/udfedit.py" "$out" read-rev=0x0300 ;;
*) echo "make-udf.sh: unknown variant $variant" >&2; exit 2 ;;
esac
