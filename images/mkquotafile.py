#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""An empty quota file in vfsv1 format (fs/quota/quotaio_v2.h), what
quotacheck would write for a filesystem that owns nothing: the header, the
info block, and an empty root block of the id tree.  quotacheck itself needs
a mounted filesystem, which these images never are on the host.

usage: mkquotafile.py user|group OUT
"""
import struct
import sys

MAGIC = {'user': 0xd9c01f11, 'group': 0xd9c01927}
BLOCK = 1024            # V2_DQBLKSIZE
GRACE = 7 * 24 * 3600   # MAX_DQ_TIME, MAX_IQ_TIME

kind, out = sys.argv[1], sys.argv[2]
header = struct.pack('<II', MAGIC[kind], 1)                     # magic, version 1 = vfsv1
info = struct.pack('<6I', GRACE, GRACE, 0, 2, 0, 0)             # grace, grace, flags,
                                                                # blocks, free_blk, free_entry
data = (header + info).ljust(BLOCK, b'\0') + bytes(BLOCK)      # block 1: tree root
with open(out, 'wb') as f:
    f.write(data)
