# SPDX-License-Identifier: GPL-2.0
"""The kernel tree: pristine linux-source-6.12 + patches/series + kunit-tests/
+ the run's extra patches, exactly.

The tarball is extracted once and committed to a private git repository
(tag "pristine").  The wanted state is built as a git tree object in a
scratch index, so a patch that does not apply fails before the work tree is
touched; "git reset --hard" then rewrites only the files whose content
differs, which keeps make's mtimes, and so the rebuild, incremental, and
repairs whatever an interrupted run left half-written.  Only the Workspace,
which holds the WORKDIR lock, calls sync()."""

import contextlib
import hashlib
import os
import shutil
import subprocess

from . import catalogue
from .config import PACKAGE


class TreeError(Exception):
    pass


def installed_version(package=PACKAGE):
    r = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else 'unknown'


class Tree:
    def __init__(self, workdir, top, tarball=None, package=PACKAGE, origin=None):
        self.package = package
        # A tree made from another's repository (the proof's second builder)
        # instead of the tarball.
        self.origin = origin
        self.tarball = tarball or '/usr/src/%s.tar.xz' % package
        self.path = os.path.join(workdir, package)
        self.workdir = workdir
        self.top = top
        self.record = os.path.join(self.path, '.git', 'fs-kunit-synced')

    def git(self, *args, env=None, input=None, check=True):
        r = subprocess.run(['git', '-C', self.path, '-c', 'user.name=fs-kunit',
                            '-c', 'user.email=fs-kunit@localhost', '-c', 'core.autocrlf=false',
                            '-c', 'gc.auto=0', *args],
                           capture_output=True, text=True, input=input,
                           env=dict(os.environ, **(env or {})))
        if check and r.returncode:
            raise TreeError('git %s: %s' % (' '.join(args), r.stderr.strip()))
        return r

    @property
    def version(self):
        with open(os.path.join(self.path, '.git', 'fs-kunit-version')) as f:
            return f.read().strip()

    def _clone(self):
        """The origin's repository, its objects hard-linked (no checkout:
        the first sync writes the files)."""
        print('tree: cloning %s into %s (once)' % (self.origin, self.path), flush=True)
        new = self.path + '.new'
        shutil.rmtree(new, ignore_errors=True)
        os.makedirs(os.path.dirname(new), exist_ok=True)
        r = subprocess.run(['git', 'clone', '-q', '--local', '--no-checkout', self.origin, new],
                           capture_output=True, text=True)
        if r.returncode:
            raise TreeError('git clone %s: %s' % (self.origin, r.stderr.strip()))
        shutil.copy(os.path.join(self.origin, '.git', 'fs-kunit-version'),
                    os.path.join(new, '.git', 'fs-kunit-version'))
        shutil.rmtree(self.path, ignore_errors=True)
        os.rename(new, self.path)

    def _pristine(self, path):
        r = subprocess.run(['git', '-C', path, 'rev-parse', '-q', '--verify',
                            'refs/tags/pristine'], capture_output=True, text=True)
        return r.stdout.strip()

    def _extract(self):
        if self.origin:
            return self._clone()
        if not os.access(self.tarball, os.R_OK):
            raise TreeError('%s not found: install %s (make deps)' % (self.tarball, self.package))
        version = installed_version(self.package)
        print('tree: extracting %s %s into %s (once)' % (self.package, version, self.path),
              flush=True)
        new = self.path + '.new'
        shutil.rmtree(new, ignore_errors=True)
        os.makedirs(new)
        subprocess.run(['tar', '-xf', self.tarball, '-C', new, '--strip-components=1'],
                       check=True)
        ident = ['-c', 'user.name=fs-kunit', '-c', 'user.email=fs-kunit@localhost',
                 '-c', 'gc.auto=0']
        for args in (['init', '-q'], ['add', '-f', '-A'],  # Debian's .gitignore ignores all
                     ['commit', '-q', '-m', '%s %s (pristine)' % (self.package, version)],
                     ['tag', 'pristine']):
            subprocess.run(['git', '-C', new, *ident, *args], check=True)
        with open(os.path.join(new, '.git', 'fs-kunit-version'), 'w') as f:
            f.write(version + '\n')
        # Renamed into place only when complete: a half-extracted tree never
        # looks like a tree.
        shutil.rmtree(self.path, ignore_errors=True)
        os.rename(new, self.path)

    def _tarball_stat(self):
        st = os.stat(self.tarball)
        return '%d %d' % (st.st_mtime_ns, st.st_size)

    def _tarball_seen(self):
        """Whether the tarball is as it was when this tree's version was
        last confirmed: dpkg-query is asked only when it changed (a run
        with nothing to do otherwise pays a process for it)."""
        try:
            with open(os.path.join(self.path, '.git', 'fs-kunit-tarball')) as f:
                return f.read() == self._tarball_stat()
        except OSError:
            return False

    def _tarball_confirmed(self):
        with contextlib.suppress(OSError):
            stat = self._tarball_stat()
            with open(os.path.join(self.path, '.git', 'fs-kunit-tarball'), 'w') as f:
                f.write(stat)

    def ensure(self):
        os.makedirs(self.workdir, exist_ok=True)
        have = os.path.join(self.path, '.git', 'fs-kunit-version')
        if not os.path.exists(have) or \
                self.git('rev-parse', '-q', '--verify', 'refs/tags/pristine',
                         check=False).returncode:
            self._extract()
        elif self.origin and self._pristine(self.path) != self._pristine(self.origin):
            print('tree: %s was extracted again: cloning it again' % self.origin, flush=True)
            self._extract()
        elif not self.origin and not self._tarball_seen():
            version = installed_version(self.package)
            if version not in ('unknown', self.version):
                print('tree: %s moved to %s: extracting again' % (self.package, version),
                      flush=True)
                self._extract()
            if version == self.version:
                self._tarball_confirmed()
        # A run killed inside git leaves its lock behind; we hold the WORKDIR lock.
        lock = os.path.join(self.path, '.git', 'index.lock')
        if os.path.exists(lock):
            os.unlink(lock)

    def _apply(self, index, patch):
        r = self.git('apply', '--cached', '--whitespace=nowarn', patch,
                     env={'GIT_INDEX_FILE': index}, check=False)
        if r.returncode:
            raise TreeError('%s\npatch %s does not apply to %s %s; the tree is left as it was'
                            % (r.stderr.strip(), os.path.basename(patch), self.package,
                               self.version))

    def _test_files(self):
        root = os.path.join(self.top, 'kunit-tests')
        for d, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                if not f.endswith('~'):
                    path = os.path.join(d, f)
                    yield os.path.relpath(path, root), path

    def wanted(self, extra=()):
        """The tree object of pristine + series + tests + @extra."""
        for patch in extra:
            if not os.access(patch, os.R_OK):
                raise TreeError('patch %s not found' % patch)
        base = self.series_tree()
        if not extra:
            return base
        # Extra patches last: a regression patch may break a fixture too.
        index = self._scratch_index(base)
        for patch in extra:
            self._apply(index, patch)
        return self._write_tree(index)

    # Applying the series takes 3 of the 5 s of a sync here, and the
    # regression proof syncs twice per kernel: the tree of pristine + series
    # + tests is kept, with the hash of its inputs, and a run's extra
    # patches are applied to it alone.  The tree of pristine + series is kept
    # too, with the hash of the patches: after a test's edit (the edit loop)
    # only the test sources are laid over it again.
    def series_tree(self):
        key, record = self.inputs_hash(), os.path.join(self.path, '.git', 'fs-kunit-series')
        tree = self._kept(record, key)
        if tree:
            return tree
        index = self._scratch_index(self._patched_tree())
        # Test sources are copied as blobs at their kernel paths, hashed in
        # one git call (one per file was a tenth of an edit's sync); as they
        # are, since the tree is checked out without filters.
        files = list(self._test_files())
        blobs = self.git('hash-object', '-w', '--no-filters', '--stdin-paths',
                         input=''.join(path + '\n' for _, path in files)).stdout.split()
        if len(blobs) != len(files):
            raise TreeError('git hash-object gave %d ids for %d test files'
                            % (len(blobs), len(files)))
        info = ['100644 %s\t%s\n' % (blob, rel) for (rel, _), blob in zip(files, blobs)]
        self.git('update-index', '--add', '--index-info', input=''.join(info),
                 env={'GIT_INDEX_FILE': index})
        tree = self._write_tree(index)
        with open(record, 'w') as f:
            f.write('%s %s\n' % (key, tree))
        return tree

    def _patched_tree(self):
        """The tree of pristine + patches/series."""
        key = self._patches_hash(catalogue.series_patches(self.top)).hexdigest()
        record = os.path.join(self.path, '.git', 'fs-kunit-patched')
        tree = self._kept(record, key)
        if tree:
            return tree
        index = self._scratch_index('pristine')
        for patch in catalogue.series_patches(self.top):
            self._apply(index, patch)
        tree = self._write_tree(index)
        with open(record, 'w') as f:
            f.write('%s %s\n' % (key, tree))
        return tree

    def _kept(self, record, key):
        """The tree @record keeps for @key, if it is still there."""
        with contextlib.suppress(OSError, ValueError):
            with open(record) as f:
                recorded, tree = f.read().split()
            if recorded == key and not self.git('cat-file', '-e', tree + '^{tree}',
                                                 check=False).returncode:
                return tree
        return None

    def _scratch_index(self, start):
        index = os.path.join(self.path, '.git', 'fs-kunit-scratch-index')
        if os.path.exists(index):
            os.unlink(index)
        self.git('read-tree', start, env={'GIT_INDEX_FILE': index})
        return index

    def _write_tree(self, index):
        tree = self.git('write-tree', env={'GIT_INDEX_FILE': index}).stdout.strip()
        os.unlink(index)
        return tree

    @staticmethod
    def _patches_hash(patches):
        h = hashlib.sha256()
        for patch in patches:
            with open(patch, 'rb') as f:
                h.update(patch.encode() + b'\0' + f.read())
        return h

    def inputs_hash(self, extra=()):
        h = self._patches_hash(list(catalogue.series_patches(self.top)) + list(extra))
        for rel, path in self._test_files():
            with open(path, 'rb') as f:
                h.update(rel.encode() + b'\0' + hashlib.sha256(f.read()).digest())
        return h.hexdigest()

    def head_tree(self):
        r = self.git('rev-parse', '-q', '--verify', 'HEAD^{tree}', check=False)
        return r.stdout.strip()

    def sync(self, extra=()):
        """Bring the work tree to the wanted state; its tree id.  Fast path:
        the last complete sync had the same inputs and no tracked file was
        touched since.  The record is removed before any change and written
        after a complete one, so an interrupted sync takes the slow path."""
        self.ensure()
        inputs = self.inputs_hash(extra)
        try:
            with open(self.record) as f:
                recorded = f.read().split()
        except OSError:
            recorded = []
        if recorded == [inputs, self.head_tree()] and \
                self.git('diff-files', '--quiet', check=False).returncode == 0:
            return recorded[1]
        self.forget_sync()
        tree = self.wanted(extra)
        # A tree that differs is reset and cleaned anyway: no status scan then.
        if self.head_tree() != tree or self.git('status', '--porcelain',
                                                '--untracked-files=all',
                                                '--ignored=matching').stdout.strip():
            commit = self.git('commit-tree', tree, '-p', 'pristine',
                              input='pristine + series + tests%s\n'
                              % (' + extra' if extra else '')).stdout.strip()
            self.git('reset', '-q', '--hard', commit)
            self.git('clean', '-q', '-ffdx')
        with open(self.record, 'w') as f:
            f.write('%s %s\n' % (inputs, tree))
        return tree

    def forget_sync(self):
        """The work tree is about to leave the recorded state."""
        if os.path.exists(self.record):
            os.unlink(self.record)
