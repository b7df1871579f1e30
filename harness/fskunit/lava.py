# SPDX-License-Identifier: GPL-2.0
"""The boots as LAVA jobs (RUNNER=lava, make lava-jobs).

A job boots the kernel kunit.py built, with the command line and QEMU
options kunit.py exec would give it (read from the same qemu config, by
kunit.py's own loader), on LAVA's `qemu` device type.  LAVA records the
console; the verdicts are ours: the console LAVA recorded is judged by the
same code as a QEMU run's (results.parse()).  LAVA's pattern monitor is in
the job only so that a LAVA instance shows something of its own; it flattens
KTAP's nesting and says nothing of a crash.

Debian's lava-dispatcher (lava-run) and lava-common (the job schema) are
used as they are."""

import functools
import itertools
import json
import os
import shlex
import subprocess
import time

import yaml

from . import timing

LAVA_RUN = '/usr/bin/lava-run'
_JOB_IDS = itertools.count(1)

# What kunit.py gives every QEMU, whatever the qemu config
# (LinuxSourceTreeOperationsQemu.start()).  The device has only these: what
# the configuration adds (the firmware, the accelerator) is the job's, so
# that one device serves every profile and machine.
KUNIT_QEMU_OPTIONS = ['-nodefaults', '-m 1024', '-no-reboot', '-nographic', '-serial stdio']

# The device configuration lava-run takes: what lava-server would render
# from DEVICE_DICTIONARY.  LAVA's deploy and boot actions read these
# constants whether or not the job logs in anywhere (ours does not).
DEVICE = {
    'available_architectures': ['x86_64'],
    'constants': {
        'shutdown-message': 'The system is going down for reboot NOW',
        'kernel-start-message': 'Linux version [0-9]',
        'default-shell-prompt': 'lava-test: # ',
        'boot_retry': 1,
        'failure_retry': 1,
        'spawn_maxread': 4092,
        'posix': {'lava_test_sh_cmd': '/bin/sh', 'lava_test_results_dir': '/lava-%s',
                  'lava_test_shell_file': '~/.bashrc'},
    },
    'commands': {},
    'parameters': {'pass': None},
    'actions': {
        'deploy': {'connections': {'serial': None},
                   'methods': {'image': {'parameters': {'guest': {'size': 512,
                                                                  'interface': 'ide'}}}}},
        'boot': {'connections': {'serial': None},
                 'methods': {'qemu': {'parameters': {'command': 'qemu-system-x86_64',
                                                     'options': KUNIT_QEMU_OPTIONS}}}},
    },
    'timeouts': {'actions': {}, 'connections': {}},
}

# The same device for a lava-server worker, from lava-server's qemu
# template, which gives -nographic, -m and a NIC the suites do not use; the
# rest of kunit.py's options are added.  TCG: the template's default is KVM.
DEVICE_DICTIONARY = """\
{% extends 'qemu.jinja2' %}
{% set memory = 1024 %}
{% set no_kvm = True %}
{% set extra_options = ['-nodefaults', '-no-reboot', '-serial stdio'] %}
"""


class LavaError(Exception):
    pass


def qemu_config(cfg, tree):
    """(kernel command line, extra QEMU options) of cfg's qemu config, as
    kunit.py exec reads them: by kunit.py's own loader, in a child process,
    since the config looks at kunit.py's command line (for -initrd)."""
    return _qemu_config(tree, cfg.qemu_config, cfg.initramfs if cfg.init else '', cfg.accel)


@functools.lru_cache(maxsize=None)
def _qemu_config(tree, path, initramfs, accel):
    argv = ['kunit.py', 'exec'] + (['--qemu_args=-initrd ' + initramfs] if initramfs else [])
    code = ('import json, sys\n'
            'sys.argv = %r\n'
            'import kunit_kernel\n'
            '_, ops = kunit_kernel._get_qemu_ops(%r, None, None)\n'
            # kunit.py has no accessor: the attributes start() uses.
            'print(json.dumps([ops._kernel_command_line, ops._extra_qemu_params, ops._serial]))\n'
            % (argv, path))
    out = subprocess.run(['/usr/bin/python3', '-c', code], cwd=os.path.join(tree, 'tools/testing/kunit'),
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE='1',
                                  KUNIT_QEMU_ACCEL=accel),
                         capture_output=True, text=True)
    if out.returncode:
        raise LavaError('cannot read %s with kunit.py: %s' % (path, out.stderr.strip()))
    command_line, extra, serial = json.loads(out.stdout)
    if serial != 'stdio':
        raise LavaError('%s puts the console on %s; LAVA reads it on stdio' % (path, serial))
    return command_line, extra


def kernel_args(cfg, tree, filter_glob='', extra=()):
    """The kernel's command line, as kunit.py exec makes it (run_kernel())."""
    args = list(cfg.kernel_args) + list(extra)
    if filter_glob:
        args.append('kunit.filter_glob=' + filter_glob)
    args.append('kunit.enable=1')
    return args + [qemu_config(cfg, tree)[0]]


# kunit_shutdown=reboot; a panic ends QEMU (panic=-1, -no-reboot).
END = 'reboot: Restarting system'
# A mutant's boot stops at the first case that fails, as make mutants' does.
FIRST_FAILURE = r'not ok \d+ '


def job(cfg, tree, name, seconds, filter_glob='', extra_args=(), kernel=None,
        fail_fast=False):
    """A LAVA job that boots @kernel (cfg's bzImage) with the command line
    kunit.py exec would give it, and ends within @seconds of its boot (with
    @fail_fast, at the first case that fails)."""
    kernel = kernel or bzimage(cfg)
    args = kernel_args(cfg, tree, filter_glob, extra_args)
    _, extra = qemu_config(cfg, tree)
    images = {'kernel': {
        'url': 'file://' + os.path.abspath(kernel),
        # QEMU's own arguments after the kernel: -append, and what the
        # qemu config adds to kunit.py's (firmware, accelerator).
        'image_arg': '-kernel {kernel} -append %s %s' % (
            shlex.quote(' '.join(args)), ' '.join(shlex.quote(e) for e in extra)),
    }}
    if cfg.init:
        images['ramdisk'] = {'url': 'file://' + os.path.abspath(cfg.initramfs),
                             'image_arg': '-initrd {ramdisk}'}
    return {
        'job_name': 'fs-kunit %s %s' % (cfg.describe(), name),
        'device_type': 'qemu',
        'visibility': 'public',
        'priority': 'medium',
        'timeouts': {'job': {'seconds': seconds + 120}, 'action': {'seconds': seconds}},
        'context': {'arch': 'x86_64'},
        'actions': [
            {'deploy': {'to': 'tmpfs', 'timeout': {'seconds': 60}, 'images': images}},
            {'boot': {'method': 'qemu', 'media': 'tmpfs', 'timeout': {'seconds': seconds}}},
            {'test': {'timeout': {'seconds': seconds}, 'monitors': [{
                'name': 'kunit',
                'start': 'KTAP version 1',
                # LAVA's monitor takes the end as a regular expression.
                'end': END + ('|' + FIRST_FAILURE if fail_fast else ''),
                'pattern': r'(?P<result>(ok|not ok)) \d+ (?P<test_case_id>[^#\r\n]+)\r*\n',
                'fixupdict': {'ok': 'pass', 'not ok': 'fail'},
            }]}},
        ],
    }


def validate(definition):
    """The job checked against LAVA's own schema (lava-common)."""
    try:
        from lava_common import schemas
    except ImportError:
        raise LavaError('lava-common is not installed (make deps installs it)')
    try:
        schemas.validate(definition, strict=True)
    except Exception as e:  # voluptuous.Invalid, and what it wraps
        raise LavaError('LAVA refuses job %r: %s' % (definition.get('job_name'), e))


def validate_device(device=DEVICE):
    try:
        from lava_common.schemas import device as schema
    except ImportError:
        raise LavaError('lava-common is not installed (make deps installs it)')
    try:
        schema.validate(device)
    except Exception as e:
        raise LavaError('LAVA refuses the device configuration: %s' % e)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        yaml.safe_dump(data, f, sort_keys=False, width=1000)
    return path


def write_device(directory):
    """device.yaml (for lava-run) and qemu-fs-kunit.jinja2 (the device
    dictionary for a lava-server) in @directory; the first's path."""
    validate_device()
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, 'qemu-fs-kunit.jinja2'), 'w') as f:
        f.write(DEVICE_DICTIONARY)
    return write(os.path.join(directory, 'device.yaml'), DEVICE)


def console(log_lines):
    """The guest's console from a LAVA job log (lava-run's output, or the
    log a lava-server keeps): its 'target' entries, in order."""
    out = []
    for line in log_lines:
        if '"lvl": "target"' not in line and "lvl: target" not in line:
            continue
        entry = yaml.load(line, Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
        if isinstance(entry, list):  # a server's log is one YAML list
            entry = entry[0]
        msg = entry.get('msg')
        if isinstance(msg, str):
            out.append(msg)
    return out


def run(cfg, definition, directory, each_line=None):
    """Run @definition with lava-run on this machine: (console lines, the
    whole LAVA log, seconds).  The LAVA log is kept in @directory."""
    if not os.access(LAVA_RUN, os.X_OK):
        raise LavaError('RUNNER=lava needs lava-run (Debian lava-dispatcher; make deps installs it)')
    validate(definition)
    device = write_device(directory)
    job_path = write(os.path.join(directory, 'job.yaml'), definition)
    out_dir = os.path.join(directory, 'output')
    # A job id of its own: lava-run's scratch directory is named after it,
    # and two lanes may run at once.
    job_id = '%d%04d' % (os.getpid(), next(_JOB_IDS) % 10000)
    cmd = [LAVA_RUN, '--job-id', job_id, '--output-dir', out_dir, '--device', device, job_path]
    t = time.monotonic()
    log = []
    with open(os.path.join(directory, 'lava.log'), 'w') as keep:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors='replace', start_new_session=True)
        from .workspace import RUNNING  # it imports us
        RUNNING.add(proc)
        try:
            for line in proc.stdout:
                keep.write(line)
                log.append(line)
                if each_line and '"lvl": "target"' in line:
                    each_line(line)
            proc.wait()
        except BaseException:
            os.killpg(proc.pid, 15)
            proc.wait()
            raise
        finally:
            RUNNING.discard(proc)
    seconds = time.monotonic() - t
    lines = console(log)
    if not lines:
        raise LavaError('lava-run (exit %d) recorded no console: its log is %s'
                        % (proc.returncode, os.path.join(directory, 'lava.log')))
    return lines, log, seconds


def bzimage(cfg):
    return os.path.join(cfg.build_dir, 'arch/x86/boot/bzImage')


def mutants_cfg(cfg, profile):
    """The settings of @profile's schemata kernel (make mutants builds it)."""
    return cfg.with_(profile=profile, variant='mutants', mode='builtin')


def mutant_job(cfg, tree, m, seconds):
    """The boot make mutants gives mutant @m (its number 0: none, the
    baseline) on its suites, on its profile's schemata kernel."""
    mcfg = mutants_cfg(cfg, m.profile)
    return job(mcfg, tree, 'mutant %d %s' % (m.n, m.key), seconds, m.suites,
               extra_args=('fs_kunit_mutant=%d' % m.n,), kernel=bzimage(mcfg),
               fail_fast=m.n != 0)


def write_jobs(ws, cfg, directory):
    """make lava-jobs: in @directory, the device (device.yaml and its
    dictionary), suite.yaml (every suite of cfg's kernel) and
    mutants/<n>.yaml (each mutant of the scope, on its profile's schemata
    kernel, as make mutants boots it), each validated.  Returns (jobs
    written, mutants left out because their kernel is not built)."""
    from . import mutants  # it needs the Workspace, which needs us
    tree = ws.tree.path
    if not os.path.exists(bzimage(cfg)):
        raise LavaError('no kernel in %s: make run (with the same settings) builds it'
                        % cfg.build_dir)
    write_device(directory)
    jobs = []
    suite = job(cfg, tree, 'suite', timing.timeout(cfg, []))
    validate(suite)
    jobs.append(write(os.path.join(directory, 'suite.yaml'), suite))
    missing = 0
    for m, _ in mutants.plan(cfg.top, tree):
        mcfg = mutants_cfg(cfg, m.profile)
        if not os.path.exists(bzimage(mcfg)):
            missing += 1
            continue
        definition = mutant_job(cfg, tree, m, timing.timeout(mcfg, []))
        validate(definition)
        jobs.append(write(os.path.join(directory, 'mutants', '%03d.yaml' % m.n), definition))
    return jobs, missing

