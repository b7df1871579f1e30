#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Zero what mkfs.jfs leaves uninitialised in the log of an image.

mkfs.jfs (jfsutils 1.1.15) writes log pages from a stack buffer it never
clears: the bytes after a page's last record (the header's eor) are
whatever was on its stack, different on every run.  Nothing reads them:
the kernel (lmLogInit) and logredo take a page's records up to eor.
It also leaves the superblocks' s_loguuid uninitialised, which only an
external log uses (the kernel's inline log never reads it).  Zeroing all of
it makes the image reproducible and changes nothing it means.

usage: jfsnorm.py IMAGE   (edited in place)
"""
import struct
import sys

SUPER1_OFF = 0x8000     # fs/jfs/jfs_filsys.h
SUPER2_OFF = 0xf000
JFS_INLINELOG = 0x800
S_FLAG = 36             # struct jfs_superblock
S_LOGUUID = 168
LOGPSIZE = 4096         # fs/jfs/jfs_logmgr.h
LOGMAGIC = 0x87654321
HEADER = 8              # struct logpage.h: page, rsrvd, eor
TRAILER = 8             # struct logpage.t

with open(sys.argv[1], 'r+b') as f:
    img = bytearray(f.read())
    magic, = struct.unpack_from('<4s', img, SUPER1_OFF)
    if magic != b'JFS1':
        sys.exit('jfsnorm.py: %s: no JFS superblock' % sys.argv[1])
    flag, = struct.unpack_from('<I', img, SUPER1_OFF + S_FLAG)
    if not flag & JFS_INLINELOG:
        sys.exit('jfsnorm.py: %s: the log is not inline' % sys.argv[1])
    for sb in (SUPER1_OFF, SUPER2_OFF):
        img[sb + S_LOGUUID:sb + S_LOGUUID + 16] = bytes(16)
    bsize, = struct.unpack_from('<I', img, SUPER1_OFF + 16)
    len_addr, addr2 = struct.unpack_from('<II', img, SUPER1_OFF + 72)   # s_logpxd
    log = (((len_addr >> 24) << 32) | addr2) * bsize
    nbytes = (len_addr & 0xffffff) * bsize
    if struct.unpack_from('<I', img, log + LOGPSIZE)[0] != LOGMAGIC:
        sys.exit('jfsnorm.py: %s: no inline log where s_logpxd says' % sys.argv[1])
    for page in range(log + 2 * LOGPSIZE, log + nbytes, LOGPSIZE):
        eor, = struct.unpack_from('<H', img, page + 6)
        start = max(eor, HEADER)
        end = LOGPSIZE - TRAILER
        if start < end:
            img[page + start:page + end] = bytes(end - start)
    f.seek(0)
    f.write(img)
