# SPDX-License-Identifier: GPL-2.0
"""The guest's clock under TCG.  kunitconfig has no ACPI, so a guest has no
HPET or PM timer to calibrate its TSC against, only the PIT; on a busy host
(the proof's builds beside two guests) that calibration failed in 152 of 186
boots of one make check, which then ran on jiffies: time that falls behind,
a hung-task report later than the run's time-out, and regressions/block/05
hanging in a case before the one it names.  QEMU's rdtsc under TCG is the
host's, so the host's rate is the guest's: measured here once per host boot
(harness/tsc-khz.c) and given to qemu-configs/x86_64.py, which passes it on
as tsc_early_khz=."""

import json
import os
import platform
import subprocess

ENV = 'FS_KUNIT_TSC_KHZ'


def tsc_khz(workdir, top):
    """The host's TSC rate in kHz, or None (with the reason said)."""
    if platform.machine() != 'x86_64':
        return None
    with open('/proc/sys/kernel/random/boot_id') as f:
        boot = f.read().strip()
    record = os.path.join(workdir, 'tsc-khz.json')
    try:
        with open(record) as f:
            known = json.load(f)
        if known['boot'] == boot:
            return known['khz']
    except (OSError, ValueError, KeyError):
        pass
    exe = os.path.join(workdir, 'tsc-khz')
    made = subprocess.run(['gcc', '-O2', '-o', exe, os.path.join(top, 'harness', 'tsc-khz.c')],
                          capture_output=True, text=True)
    if made.returncode:
        print('run: the host\'s TSC rate is unknown (gcc: %s); guests calibrate against the PIT'
              % made.stderr.strip()[-200:], flush=True)
        return None
    khz = int(subprocess.run([exe], capture_output=True, text=True, check=True).stdout)
    with open(record, 'w') as f:
        json.dump({'boot': boot, 'khz': khz}, f)
    return khz


def export(workdir, top):
    """Every kunit.py (and LAVA job) this process starts gets the rate."""
    khz = tsc_khz(workdir, top)
    if khz:
        os.environ[ENV] = str(khz)
