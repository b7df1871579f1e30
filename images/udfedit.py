#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Edit one field of a UDF descriptor that mkudffs made, and make the
descriptor valid again: its tag checksum and CRC are recomputed, so the
kernel reads the edited value instead of rejecting the descriptor.

usage: udfedit.py IMAGE EDIT
  read-rev=0xNNNN   LVID implementation use: minUDFReadRev
  write-rev=0xNNNN  LVID implementation use: minUDFWriteRev (mkudffs refuses
                    revisions above 2.01 for hard disks, so this is an edit)
  access-type=N     Partition Descriptor accessType (1: read-only)
  root-unreadable   FSD rootDirectoryICB -> a zero block inside the partition
  no-fileset        FSD tag identifier -> 0xFFFF: no File Set Descriptor
  bad-unalloc-table the Unallocated Space Entry's first extent one byte longer:
                    not a whole number of blocks (udf_check_unalloc_table())
  unalloc-table-unreadable  the Partition Descriptor's unallocSpaceTable -> a
                    zero block inside the partition: no descriptor to load
  show              print what the edits look at

Offsets are ECMA-167 3rd edition / OSTA UDF 2.01 (fs/udf/ecma_167.h, osta_udf.h).
"""
import struct
import sys

BLOCK = 2048
TAG_PD, TAG_LVID, TAG_FSD, TAG_USE = 5, 9, 256, 263


def crc_itu_t(data, crc=0):
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


def tag_ok(img, off):
    tag = img[off:off + 16]
    return len(tag) == 16 and (sum(tag[:4]) + sum(tag[5:16])) & 0xFF == tag[4]


def retag(img, off):
    """Recompute CRC (over descCRCLength bytes after the tag) and checksum."""
    crc_len = struct.unpack_from('<H', img, off + 10)[0]
    struct.pack_into('<H', img, off + 8, crc_itu_t(img[off + 16:off + 16 + crc_len]))
    img[off + 4] = (sum(img[off:off + 4]) + sum(img[off + 5:off + 16])) & 0xFF


def find(img, ident):
    """Byte offsets of valid descriptors with this tag identifier."""
    found = []
    for block in range(len(img) // BLOCK):
        off = block * BLOCK
        tid, = struct.unpack_from('<H', img, off)
        if tid == ident and tag_ok(img, off):
            found.append(off)
    return found


def partition(img):
    pd = find(img, TAG_PD)[0]
    start, length = struct.unpack_from('<II', img, pd + 188)
    return start, length


def zero_block(img):
    """The last all-zero block of the partition, relative to its start."""
    start, length = partition(img)
    return next(b for b in range(length - 1, 0, -1)
                if not any(img[(start + b) * BLOCK:(start + b + 1) * BLOCK]))


def lvid_impuse(img, lvid):
    n, = struct.unpack_from('<I', img, lvid + 72)
    return lvid + 80 + 8 * n


def main():
    path, edit = sys.argv[1], sys.argv[2]
    img = bytearray(open(path, 'rb').read())
    if edit.startswith(('read-rev=', 'write-rev=')):
        field = 40 if edit.startswith('read') else 42
        for lvid in find(img, TAG_LVID):
            struct.pack_into('<H', img, lvid_impuse(img, lvid) + field,
                             int(edit.split('=')[1], 0))
            retag(img, lvid)
    elif edit.startswith('access-type='):
        for pd in find(img, TAG_PD):
            struct.pack_into('<I', img, pd + 184, int(edit.split('=')[1], 0))
            retag(img, pd)
    elif edit == 'root-unreadable':
        zero = zero_block(img)
        for fsd in find(img, TAG_FSD):
            struct.pack_into('<I', img, fsd + 404, zero)
            retag(img, fsd)
    elif edit == 'no-fileset':
        for fsd in find(img, TAG_FSD):
            struct.pack_into('<H', img, fsd, 0xFFFF)
            retag(img, fsd)
    elif edit == 'bad-unalloc-table':
        start, _ = partition(img)
        pd = find(img, TAG_PD)[0]
        # partitionContentsUse: the Partition Header Descriptor, whose first
        # short_ad is the unallocSpaceTable; the USE's ADs follow its 40 bytes.
        length, block = struct.unpack_from('<II', img, pd + 56)
        use = (start + block) * BLOCK
        if not length or struct.unpack_from('<H', img, use)[0] != TAG_USE:
            sys.exit('udfedit.py: no unallocated space table (mkudffs --space=unalloctable)')
        ad, = struct.unpack_from('<I', img, use + 40)
        struct.pack_into('<I', img, use + 40, ad + 1)
        retag(img, use)
    elif edit == 'unalloc-table-unreadable':
        zero = zero_block(img)
        for pd in find(img, TAG_PD):
            if not struct.unpack_from('<I', img, pd + 56)[0]:
                sys.exit('udfedit.py: no unallocated space table (mkudffs --space=unalloctable)')
            struct.pack_into('<I', img, pd + 60, zero)
            retag(img, pd)
    elif edit == 'show':
        for lvid in find(img, TAG_LVID):
            iu = lvid_impuse(img, lvid)
            print('LVID at block %d: integrityType %d, minUDFReadRev %#x, minUDFWriteRev %#x'
                  % (lvid // BLOCK, struct.unpack_from('<I', img, lvid + 28)[0],
                     *struct.unpack_from('<HH', img, iu + 40)))
        for fsd in find(img, TAG_FSD):
            print('FSD at block %d: root ICB block %d' % (fsd // BLOCK,
                                                         struct.unpack_from('<I', img, fsd + 404)[0]))
        pd = find(img, TAG_PD)[0]
        print('PD at block %d: accessType %d, partition %d+%d' % (
            pd // BLOCK, struct.unpack_from('<I', img, pd + 184)[0], *partition(img)))
        return
    else:
        sys.exit('udfedit.py: unknown edit %s' % edit)
    open(path, 'wb').write(img)


if __name__ == '__main__':
    main()
