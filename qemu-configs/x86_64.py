# SPDX-License-Identifier: GPL-2.0
# kunit.py QEMU config for this suite (kunit.py run --qemu_config=...).
# It differs from tools/testing/kunit/qemu_configs/x86_64.py in these ways:
# - panic=-1 (with kunit.py's -no-reboot) ends QEMU at once on a panic
#   instead of leaving it to the timeout, and oops=panic makes an oops one:
#   an oops in a work item (an unmount, say) would otherwise leave the
#   device claimed and every later case waiting for it;
# - nokaslr keeps runs and oops addresses comparable;
# - TCG is asked for explicitly: /dev/kvm exists on our machines but guests
#   stall under it. KUNIT_QEMU_ACCEL=kvm opts back in;
# - with an initramfs (MODE=modules, make coverage: the harness gives
#   kunit.py --qemu_args=-initrd ...), its /init ends QEMU when it is done.
#   kunit.py appends kunit_shutdown=reboot, which would restart the kernel as
#   soon as its built-in tests ran; after '--' it goes to init instead, which
#   ignores it.  The config reads that from kunit.py's own command line.
# - under TCG, tsc_early_khz= and tsc=reliable when the harness measured the
#   host's TSC rate (FS_KUNIT_TSC_KHZ; harness/fskunit/clock.py says why):
#   QEMU's rdtsc is the host's, and without ACPI the guest can calibrate it
#   only against the PIT, which fails on a busy host.
import os
import sys

from ..qemu_config import QemuArchParams

_ACCEL = os.environ.get('KUNIT_QEMU_ACCEL') or 'tcg'
_TSC_KHZ = os.environ.get('FS_KUNIT_TSC_KHZ', '')
_CLOCK = (' tsc_early_khz=%s tsc=reliable' % _TSC_KHZ
	  if _TSC_KHZ.isdigit() and _ACCEL == 'tcg' else '')

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0 panic=-1 oops=panic nokaslr' + _CLOCK +
			   (' --' if any(a.startswith('--qemu_args=') and
					 '-initrd' in a.split('=', 1)[1].split()
					 for a in sys.argv) else ''),
			   extra_qemu_params=['-bios', 'qboot.rom',
					      '-accel', _ACCEL])
