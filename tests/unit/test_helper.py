"""The helper client (cinnabar.helper) against a fake helper program."""

import os
import stat
import sys
import textwrap

import pytest

from cinnabar.errors import Abort
from cinnabar.helper import PROTOCOL, Helper, HelperError, ImportCounts
from cinnabar.helper import find_helper

A, B, C, D, E = (c * 40 for c in 'abcde')

FAKE_HELPER = textwrap.dedent('''
    import os, signal, sys
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    A, B, C, D, E = (c * 40 for c in 'abcde')

    def say(*lines):
        for line in lines:
            out.write(line.encode() + b'\\n')
        out.flush()

    def blocks():
        data = b''
        while True:
            size = int(inp.readline())
            if not size:
                return data
            data += inp.read(size)

    for line in inp:
        words = line.decode().split()
        if words == ['version']:
            say('version %s 9.9' % os.environ.get('FAKE_PROTOCOL', '3'))
        elif words == ['capabilities']:
            say('capabilities http zlib')
        elif words[0] == 'hg2git':
            say(C if words[1] == A else '0' * 40)
        elif words[0] == 'git2hg':
            say(A if words[1] == C else '0' * 40)
        elif words == ['heads']:
            say('2', '%s %s default' % (A, C), '%s %s my branch' % (B, D))
        elif words[0] == 'bundle-heads':
            say('1', '%s ? default' % E)
        elif words[:2] == ['import', 'stdin']:
            say('ok %d 0 %d' % (len(blocks()), words[2] == 'bundle'))
        elif words[:2] == ['import', 'file']:
            say('error cannot open %s' % words[2])
            sys.exit(1)
        elif words[:2] == ['http', 'fetch']:
            headers = []
            for header in iter(inp.readline, b'\\n'):
                headers.append(header.decode().strip())
            body = blocks()
            say('status 200', 'Content-Type: text/plain',
                'X-Echo: %s' % ';'.join(headers + [body.decode()]), '')
            out.write(b'6\\nhello 5\\nworld0\\n')
            out.flush()
        elif words[:2] == ['http', 'import']:
            for header in iter(inp.readline, b'\\n'):
                pass
            blocks()
            say('status 404', 'error not found')
            sys.exit(1)
        elif words[0] == 'changegroup':
            commits = [inp.readline().decode().strip()
                       for _ in range(int(words[3]))]
            if words[1] == '01' and commits:
                say('error cannot represent ' + commits[0])
                continue
            with open(words[2], 'w') as cg_file:
                cg_file.write('cg%s %s' % (words[1], ' '.join(commits)))
            say('ok %d' % len(commits),
                *('%s %s' % (c, c[::-1]) for c in commits))
        elif words == ['finish']:
            say('ok ' + E)
        elif words == ['abort']:
            say('ok')
            with open(os.environ['FAKE_LOG'], 'a') as log:
                log.write('abort\\n')
        elif words == ['die']:
            os.kill(os.getpid(), signal.SIGKILL)
        else:
            say('error unknown command ' + ' '.join(words))
''')


@pytest.fixture
def fake(tmp_path, monkeypatch):
    path = tmp_path / 'fake-helper'
    path.write_text('#!%s\n%s' % (sys.executable, FAKE_HELPER))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv('GIT_CINNABAR_HELPER', str(path))
    monkeypatch.setenv('FAKE_LOG', str(tmp_path / 'log'))
    monkeypatch.setenv('FAKE_PROTOCOL', str(PROTOCOL))
    return tmp_path


@pytest.fixture
def helper(fake):
    with Helper.start(str(fake)) as helper:
        yield helper


def test_find_helper_from_environment(fake):
    assert find_helper() == str(fake / 'fake-helper')


def test_handshake(helper):
    assert helper.version == '9.9'
    assert helper.capabilities() == {'http', 'zlib'}


def test_protocol_mismatch(fake, monkeypatch):
    monkeypatch.setenv('FAKE_PROTOCOL', '1')
    with pytest.raises(Abort) as error:
        Helper.start(str(fake))
    assert 'protocol 1' in error.value.message
    assert 'make' in error.value.hint


def test_missing_helper(monkeypatch, tmp_path):
    monkeypatch.setenv('GIT_CINNABAR_HELPER', str(tmp_path / 'nothing'))
    with pytest.raises(Abort) as error:
        Helper.start(str(tmp_path))
    assert 'make' in error.value.hint


def test_conversions(helper):
    assert helper.hg2git(A) == C
    assert helper.hg2git(B).is_null
    assert helper.hg2git_many([A, B] * 300) == [C, '0' * 40] * 300
    assert helper.git2hg(C) == A
    with pytest.raises(ValueError):
        helper.hg2git('not an id')


def test_git2hg_many(helper):
    assert helper.git2hg_many([C, D] * 300) == [A, '0' * 40] * 300


def test_changegroup(helper, tmp_path):
    path = tmp_path / 'cg'
    commits = ['1' * 20 + '2' * 20, C]
    assert helper.changegroup('02', path, commits) == {
        commits[0]: '2' * 20 + '1' * 20, C: C}
    assert path.read_text() == 'cg02 %s %s' % tuple(commits)
    with pytest.raises(HelperError) as error:
        helper.changegroup('01', path, [C])
    assert error.value.message == 'cannot represent ' + C
    # After an error answer to changegroup the helper exits (PROTOCOL.md):
    # nothing more is sent to it (an abort would hide the error).
    assert not helper.alive
    with pytest.raises(ValueError):
        helper.changegroup('03', path, [])


def test_heads(helper):
    heads = helper.heads()
    assert [tuple(h) for h in heads] == [(A, C, 'default'),
                                         (B, D, 'my branch')]
    assert [tuple(h) for h in helper.bundle_heads('/x.hg')] == \
        [(E, None, 'default')]


def test_import_stream_sources(helper, tmp_path):
    assert helper.import_stream('bundle', b'x' * 100000) == \
        ImportCounts(100000, 0, 1)
    assert helper.import_stream('cg01', [b'ab', b'', b'cd']) == (4, 0, 0)
    path = tmp_path / 'data'
    path.write_bytes(b'y' * 70000)
    with open(path, 'rb') as source:
        assert helper.import_stream('cg02', source).changesets == 70000
    with pytest.raises(ValueError):
        helper.import_stream('tarball', b'')


def test_http_fetch(helper):
    response = helper.http_fetch('http://x/?cmd=heads',
                                 [('Accept', 'a/b')], b'args')
    assert response.status == 200
    assert response.headers['content-type'] == 'text/plain'
    assert response.headers['x-echo'] == 'Accept: a/b;args'
    assert response.body.read(3) == b'hel'
    assert response.body.read() == b'lo world'
    # An unread body is drained before the next command.
    helper.http_fetch('http://x/', [], None)
    assert helper.hg2git(A) == C


def test_errors_after_which_the_helper_exits(helper):
    with pytest.raises(HelperError) as error:
        helper.http_import('http://x/', [], None)
    assert '404' in error.value.message
    assert not helper.alive


def test_import_file_error(helper):
    with pytest.raises(HelperError) as error:
        helper.import_file('/nonexistent')
    assert 'cannot open' in error.value.message


def test_finish(helper):
    assert helper.finish() == E


def test_death_is_reported(helper):
    helper._command('die')
    with pytest.raises(HelperError) as error:
        helper.heads()
    assert 'killed by signal 9' in error.value.message


def test_abort_on_exception(fake):
    with pytest.raises(RuntimeError):
        with Helper.start(str(fake)):
            raise RuntimeError('interrupted')
    assert (fake / 'log').read_text() == 'abort\n'


def test_no_abort_on_success(fake):
    with Helper.start(str(fake)) as helper:
        helper.finish()
    assert not os.path.exists(fake / 'log')


def test_changegroup_branch_field():
    from cinnabar.helper import _branch_field
    assert _branch_field('stable') == b'stable'
    assert _branch_field(('default', 'feat')) == b'default\tfeat'
    for bad in ('', 'a\tb', ('a', ''), ('a', 'b\tc'), ('a\nb', 'c')):
        with pytest.raises(ValueError):
            _branch_field(bad)
