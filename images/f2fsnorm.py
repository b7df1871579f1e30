#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Give the superblocks of an f2fs image a fixed version string.

mkfs.f2fs (f2fs-tools 1.15) copies the running kernel's /proc/version into
both superblocks' version and init_version, so the image would differ on
every machine.  Only the tools print them; the kernel reads neither, and
no checksum covers them without the sb_checksum feature, which the image
does not have.

usage: f2fsnorm.py IMAGE   (edited in place)
"""
import struct
import sys

F2FS_SUPER_MAGIC = 0xF2F52010   # include/linux/f2fs_fs.h
SUPER_OFFS = (0x400, 0x1400)    # F2FS_SUPER_OFFSET in blocks 0 and 1
VERSION = 0x684                 # struct f2fs_super_block: version[256]
INIT_VERSION = 0x784            # init_version[256]
VERSION_LEN = 256
FIXED = b'fs_kunit'

with open(sys.argv[1], 'r+b') as f:
    img = bytearray(f.read())
    for sb in SUPER_OFFS:
        magic, = struct.unpack_from('<I', img, sb)
        if magic != F2FS_SUPER_MAGIC:
            sys.exit('f2fsnorm.py: no f2fs superblock at 0x%x' % sb)
        for field in (VERSION, INIT_VERSION):
            img[sb + field:sb + field + VERSION_LEN] = FIXED.ljust(VERSION_LEN, b'\0')
    f.seek(0)
    f.write(img)
