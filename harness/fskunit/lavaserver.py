# SPDX-License-Identifier: GPL-2.0
"""A lava-server on this machine, with N QEMU devices on one worker
(make lava-server, and make check's lava-server step).

Debian's lava-server 2023.01 as it is, run from a directory of its own
($WORKDIR/lava-server, made afresh each time): a PostgreSQL cluster of its
own, and lava-server's settings from the environment (DATABASE_URL,
LAVA_SETTINGS_*), so that nothing in /etc/lava-server or the machine's own
database is used or changed.  Everything started here (PostgreSQL,
gunicorn, the scheduler, lava-worker, and the lava-run jobs the worker
starts) is stopped when the Server is left, however it is left.

The jobs are lava.job()'s; the console each job recorded is judged by
our code, as a lava-run or QEMU boot's is."""

import contextlib
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import yaml

from . import lava, results, timing

LAVA_SERVER = '/usr/bin/lava-server'
GUNICORN = '/usr/bin/gunicorn3'
LAVA_WORKER = '/usr/bin/lava-worker'
USER, WORKER = 'fskunit', 'fskunit'
# Only this server's own user has it, and the server listens on 127.0.0.1.
TOKEN = 'fs-kunit-local-token'
LOCK = '/var/lock/fs-kunit-lava-server'


class ServerError(lava.LavaError):
    pass


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _postgres_bin():
    found = sorted(glob.glob('/usr/lib/postgresql/*/bin/initdb'))
    if not found:
        raise ServerError('make lava-server needs PostgreSQL (Debian postgresql; make deps '
                          'installs it)')
    return os.path.dirname(found[-1])


class Server:
    """with Server(directory, devices=2) as s: s.submit(job) ... s.wait(ids)."""

    def __init__(self, directory, devices=2, say=print):
        self.dir = os.path.abspath(directory)
        self.devices = ['qemu-%02d' % (i + 1) for i in range(devices)]
        self.say = say
        self.procs = []  # (name, Popen), in the order started
        self.pg = None
        self.url = None
        self.lock = None

    # -- start and stop -------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def env(self):
        d = self.dir
        return dict(
            os.environ,
            DATABASE_URL='postgres://lava@127.0.0.1:%d/lava' % self.pg_port,
            SECRET_KEY='fs-kunit-local-only',
            LAVA_SETTINGS_DEVICES_PATH=os.path.join(d, 'devices'),
            LAVA_SETTINGS_MEDIA_ROOT=os.path.join(d, 'media'),
            LAVA_SETTINGS_HEALTH_CHECKS_PATH=os.path.join(d, 'health-checks'),
            LAVA_SETTINGS_DJANGO_LOGFILE=os.path.join(d, 'django.log'),
            # qemu.jinja2 and base.jinja2, as the package installed them.
            LAVA_YAML_SETTINGS_DEVICE_TYPES_PATHS='["/usr/share/lava-server/device-types"]',
            LAVA_YAML_SETTINGS_ALLOWED_HOSTS='["127.0.0.1"]',
            # Without events the scheduler looks for work every 20 s only.
            LAVA_SETTINGS_EVENT_NOTIFICATION='1',
            LAVA_SETTINGS_INTERNAL_EVENT_SOCKET='ipc://' + os.path.join(d, 'events', 'socket'),
            LAVA_SETTINGS_EVENT_SOCKET='tcp://127.0.0.1:%d' % self.event_port,
            PYTHONDONTWRITEBYTECODE='1')

    def _as_postgres(self, cmd):
        # PostgreSQL refuses to run as root.
        return ['runuser', '-u', 'postgres', '--'] + cmd if os.geteuid() == 0 else cmd

    def _run(self, what, cmd):
        r = subprocess.run(cmd, cwd=self.dir, env=self.env(), capture_output=True, text=True)
        with open(os.path.join(self.dir, 'setup.log'), 'a') as f:
            f.write('$ %s\n%s%s' % (' '.join(cmd), r.stdout, r.stderr))
        if r.returncode:
            raise ServerError('%s failed (exit %d): %s; the log is %s'
                              % (what, r.returncode, (r.stderr or r.stdout).strip()[-400:],
                                 os.path.join(self.dir, 'setup.log')))
        return r.stdout

    def _spawn(self, name, cmd):
        with open(os.path.join(self.dir, name + '.out'), 'w') as log:
            p = subprocess.Popen(cmd, cwd=self.dir, env=self.env(), stdout=log,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append((name, p))
        return p

    def start(self):
        for tool in (LAVA_SERVER, GUNICORN, LAVA_WORKER):
            if not os.access(tool, os.X_OK):
                raise ServerError('make lava-server needs %s (Debian lava-server and '
                                  'lava-dispatcher; make deps installs them)' % tool)
        self._lock()
        t = time.monotonic()
        shutil.rmtree(self.dir, ignore_errors=True)
        for d in ('devices', 'media', 'health-checks', 'worker'):
            os.makedirs(os.path.join(self.dir, d))
        # lava-publisher drops root for lavaserver (the package's user)
        # before it makes its socket.
        os.makedirs(os.path.join(self.dir, 'events'))
        if os.geteuid() == 0:
            shutil.chown(os.path.join(self.dir, 'events'), 'lavaserver')
        pg_bin = _postgres_bin()
        self.pg = os.path.join(self.dir, 'pg')
        os.makedirs(self.pg)
        if os.geteuid() == 0:
            shutil.chown(self.pg, 'postgres')
        self.pg_port, self.event_port = _free_port(), _free_port()
        self._run('initdb', self._as_postgres([os.path.join(pg_bin, 'initdb'), '-A', 'trust',
                                               '-U', 'lava', '-D', self.pg]))
        self._run('PostgreSQL', self._as_postgres([
            os.path.join(pg_bin, 'pg_ctl'), '-D', self.pg,
            '-l', os.path.join(self.pg, 'server.log'),
            '-o', '-p %d -k %s -c listen_addresses=127.0.0.1' % (self.pg_port, self.pg),
            '-w', 'start']))
        self.pg_ctl = os.path.join(pg_bin, 'pg_ctl')
        self._run('createdb', [os.path.join(pg_bin, 'createdb'), '-h', '127.0.0.1',
                               '-p', str(self.pg_port), '-U', 'lava', 'lava'])
        manage = [LAVA_SERVER, 'manage']
        self._run('lava-server migrate', manage + ['migrate', '--noinput'])
        self._run('lava-server users add', manage + ['users', 'add', '--superuser', USER])
        self._run('lava-server tokens add', manage + ['tokens', 'add', '--user', USER,
                                                      '--secret', TOKEN])
        self._run('lava-server device-types add', manage + ['device-types', 'add', 'qemu'])
        out = self._run('lava-server workers add', manage + ['workers', 'add', WORKER])
        worker_token = out.split('Token:')[-1].strip()
        for name in self.devices:
            # The device dictionary make lava-jobs writes, one per device.
            with open(os.path.join(self.dir, 'devices', name + '.jinja2'), 'w') as f:
                f.write(lava.DEVICE_DICTIONARY)
            self._run('lava-server devices add', manage + [
                'devices', 'add', '--device-type', 'qemu', '--worker', WORKER, name])
        port = _free_port()
        self.url = 'http://127.0.0.1:%d/' % port
        self._spawn('gunicorn', [GUNICORN, 'lava_server.wsgi', '--bind', '127.0.0.1:%d' % port,
                                 '--workers', '2',
                                 '--log-file', os.path.join(self.dir, 'gunicorn.log')])
        self._spawn('publisher', manage + ['lava-publisher', '--host', '127.0.0.1', '--port',
                                           str(_free_port()), '--log-file',
                                           os.path.join(self.dir, 'publisher.log')])
        self._spawn('scheduler', manage + ['lava-scheduler', '--event-url',
                                           'tcp://127.0.0.1:%d' % self.event_port, '--log-file',
                                           os.path.join(self.dir, 'scheduler.log')])
        self._wait_for('the web server', lambda: self._api('workers/') is not None, 60)
        self._spawn('worker', [LAVA_WORKER, '--name', WORKER, '--url', self.url,
                               '--token', worker_token,
                               '--worker-dir', os.path.join(self.dir, 'worker'),
                               # The worker asks for jobs, and reports one
                               # finished, when it pings: every 20 s unless told.
                               '--ping-interval', '1', '--job-log-interval', '1',
                               '--log-file', os.path.join(self.dir, 'worker.log')])
        self._wait_for('lava-worker online', lambda: self._worker_state() == 'Online', 60)
        self.say('lava-server: %s, %d devices (%s) on worker %s, up in %.0f s; logs in %s'
                 % (self.url, len(self.devices), ', '.join(self.devices), WORKER,
                    time.monotonic() - t, self.dir))

    def _lock(self):
        """One server at a time on a machine: lava-worker hands lava-run the
        server's job numbers unprefixed, and lava-run deploys into
        /var/lib/lava/dispatcher/tmp/<number>, so two servers' job 1 would
        share a directory.  A second server waits for the first."""
        self.lock = open(LOCK, 'a+')
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock.seek(0)
            self.say('lava-server: waiting for the other lava-server of this machine (%s)'
                     % self.lock.read().strip())
            fcntl.flock(self.lock, fcntl.LOCK_EX)
        self.lock.seek(0)
        self.lock.truncate()
        self.lock.write('pid %d, %s\n' % (os.getpid(), self.dir))
        self.lock.flush()

    def _worker_state(self):
        got = self._api('workers/%s/' % WORKER)
        return got and got.get('state')

    def _wait_for(self, what, ready, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise ServerError('%s ended (exit %d) while waiting for %s: see %s'
                                      % (name, p.returncode, what,
                                         os.path.join(self.dir, name + '.out')))
            with contextlib.suppress(OSError, ValueError):
                if ready():
                    return
            time.sleep(0.5)
        raise ServerError('no %s after %d s: the logs are in %s' % (what, seconds, self.dir))

    def stop(self):
        """Everything started, stopped: the worker first, with the lava-run
        jobs it started (each a process group of its own, QEMU in it), then
        the rest."""
        for name, p in reversed(self.procs):
            jobs = _descendant_groups(p.pid) if name == 'worker' else set()
            _stop(p)
            for pgid in jobs:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pgid, signal.SIGKILL)
        self.procs = []
        if self.pg and os.path.exists(os.path.join(self.pg, 'postmaster.pid')):
            subprocess.run(self._as_postgres([self.pg_ctl, '-D', self.pg, '-m', 'fast', 'stop']),
                           capture_output=True)
        self.pg = None
        if self.lock:
            self.lock.close()  # and with it the flock
            self.lock = None

    # -- jobs ---------------------------------------------------------------------
    def _api(self, path, data=None):
        req = urllib.request.Request(
            self.url + 'api/v0.2/' + path, headers={'Authorization': 'Token ' + TOKEN,
                                                    'Content-Type': 'application/json'},
            data=json.dumps(data).encode() if data is not None else None)
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read().decode()
        return body if path.endswith('logs/') else json.loads(body)

    def submit(self, definition):
        lava.validate(definition)
        text = yaml.safe_dump(definition, sort_keys=False, width=1000)
        try:
            got = self._api('jobs/', {'definition': text})
        except urllib.error.HTTPError as e:
            raise ServerError('lava-server refuses job %r: %s'
                              % (definition.get('job_name'), e.read().decode()[:400]))
        return got['job_ids'][0]

    def wait(self, ids, seconds):
        """Yield (id, job, its log's lines) for each of @ids as it finishes;
        a job still unfinished after @seconds is an error."""
        left, end = list(ids), time.monotonic() + seconds
        while left:
            for i in list(left):
                job = self._api('jobs/%d/' % i)
                if job['state'] == 'Finished':
                    left.remove(i)
                    yield i, job, self._api('jobs/%d/logs/' % i).splitlines()
            if left:
                if time.monotonic() > end:
                    raise ServerError('jobs %s not finished after %d s (logs in %s)'
                                      % (left, seconds, self.dir))
                for name, p in self.procs:
                    if p.poll() is not None:
                        raise ServerError('%s ended (exit %d) with jobs %s unfinished: see %s'
                                          % (name, p.returncode, left,
                                             os.path.join(self.dir, name + '.out')))
                time.sleep(0.5)


def _stop(p):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGTERM)
    try:
        p.wait(15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def _descendant_groups(pid):
    """The process groups of @pid's descendants (lava-run renames itself,
    so its command line does not say whose it is; its parent does)."""
    children = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                with open('/proc/%s/stat' % entry) as f:
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            with contextlib.suppress(OSError):
                found.add(os.getpgid(child))
            todo.append(child)
    return found - {os.getpgid(0)}


def ended(job, console):
    """How a mutant job's boot ended, as mutants.boot() says it: 'halted'
    (the kernel shut down after its suites), 'stopped' (at the first case
    that failed: the job's end, lava.FIRST_FAILURE), 'timeout' (LAVA's
    time-out) or 'died' (QEMU ended: a panic)."""
    from .mutants import REPORT_END
    if any(lava.END in x or REPORT_END in x for x in console):
        return 'halted'
    if job.get('health') == 'Complete' and any(
            re.match(r'^\s*not ok \d+ ', results._PREFIX.sub('', x)) for x in console):
        return 'stopped'
    if 'timed out' in (job.get('failure_comment') or ''):
        return 'timeout'
    return 'died'


def seconds(job):
    """How long the job ran on its device, by the server's clock."""
    from datetime import datetime
    start, end = job.get('start_time'), job.get('end_time')
    if not start or not end:
        return 0.0
    parse = lambda s: datetime.fromisoformat(s.replace('Z', '+00:00'))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def run_mutants(ws, cfg, select, devices, say=print):
    """make lava-server: the chosen mutants (MUTANTS=, as make mutants takes
    it), each a job on the server's @devices QEMU devices, judged as make
    mutants judges a boot.  The baselines first (one job per profile and
    suites), then every mutant a baseline case reached, all submitted at
    once: the scheduler hands each to the next free device.  Returns the
    mutants and the figures."""
    import dataclasses
    from . import mutants
    planned, chosen, equivalent, profiles, left_out = mutants.prepare(ws, cfg, select)
    tree = ws.tree.path
    out = os.path.join(cfg.top, 'results', 'lava-server')
    os.makedirs(out, exist_ok=True)
    with Server(os.path.join(cfg.workdir, 'lava-server'), devices, say=say) as server:
        t0 = time.monotonic()
        groups = {}
        for m in chosen:
            if m.n not in left_out:
                groups.setdefault((m.profile, m.suites),
                                  dataclasses.replace(m, n=0, key='baseline'))
        ids = {server.submit(lava.mutant_job(cfg, tree, b, timing.timeout(
            lava.mutants_cfg(cfg, b.profile), []))): g for g, b in groups.items()}
        bases = {}
        for i, job, log in server.wait(ids, 3600):
            console = lava.console(log)
            g = ids[i]
            base = mutants.judge_baseline(console, tree, ended(job, console), ' '.join(g),
                                          os.path.join(out, 'baseline-%d.log' % i))
            bases[g] = (base, mutants.reached(console), seconds(job))
            say('lava-server: baseline %s %s: %d cases, %.0f s on %s'
                % (g[0], g[1], len(base), bases[g][2], job.get('actual_device')))
        t_base = time.monotonic() - t0
        todo = mutants.to_boot(chosen, left_out, bases)
        ids = {server.submit(lava.mutant_job(cfg, tree, m, mutants.seconds_for(
            m, bases[(m.profile, m.suites)][2]))): m for m in todo}
        for k, (i, job, log) in enumerate(server.wait(ids, 600 + 300 * len(ids)), 1):
            m = ids[i]
            console = lava.console(log)
            m.seconds = seconds(job)
            mutants.judged(m, bases[(m.profile, m.suites)][0], results.parse(console, tree),
                           ended(job, console))
            say('lava-server: %d/%d %s %s (%s) %.0f s on %s'
                % (k, len(ids), m.verdict, m.key, ', '.join(m.killed_by[:2]), m.seconds,
                   job.get('actual_device')))
        wall = time.monotonic() - t0
    problems = mutants.settle(chosen, equivalent)
    figures = {'devices': devices, 'mutants': len(chosen), 'jobs': len(todo) + len(groups),
               'baselines': round(t_base, 1), 'wall': round(wall, 1),
               'job_seconds': round(sum(m.seconds for m in todo) + sum(
                   b[2] for b in bases.values()), 1)}
    with open(os.path.join(out, 'mutants-%d.json' % devices), 'w') as f:
        json.dump({'figures': figures, 'mutants': [
            {'key': m.key, 'verdict': m.verdict, 'killed_by': m.killed_by,
             'seconds': m.seconds} for m in chosen]}, f, indent=1)
    return chosen, problems, figures


def differ_from_make_mutants(top, chosen):
    """Lines for each mutant whose verdict differs from the last make
    mutants' (results/mutants.json), where that run judged it."""
    path = os.path.join(top, 'results', 'mutants.json')
    if not os.path.exists(path):
        return []
    with open(path) as f:
        before = {m['key']: m['verdict'] for m in json.load(f)['mutants']}
    # A hang that make mutants ended early (a hung-task report) is TIMEOUT
    # there and, run to LAVA's time-out, TIMEOUT here too.
    return ['%s: %s on the server, %s by make mutants' % (m.key, m.verdict, before[m.key])
            for m in chosen if m.key in before and before[m.key] != m.verdict]
