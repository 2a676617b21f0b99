"""cinnabar.process: a child with pipes, started as subprocess would."""

import os

import pytest

from cinnabar import process


def test_pipes_both_ways():
    child = process.Process(
        ['sh', '-c', 'read x; echo "got $x"; echo err >&2'],
        stderr=process.DEVNULL)
    child.stdin.write(b'hello\n')
    assert child.read_all() == b'got hello\n'
    assert child.returncode == 0


def test_exit_status_and_signal():
    assert process.Process(['sh', '-c', 'exit 3'], stdin=None,
                           stdout=None).wait() == 3
    child = process.Process(['sh', '-c', 'kill -9 $$'], stdin=None,
                            stdout=None)
    assert child.wait() == -9


def test_environment_and_path_lookup(tmp_path):
    env = dict(os.environ, PROCESS_TEST='value')
    child = process.Process(['sh', '-c', 'echo "$PROCESS_TEST"'], env=env,
                            stdin=None)
    assert child.read_all() == b'value\n'


def test_missing_program_raises_oserror(tmp_path):
    with pytest.raises(OSError):
        process.Process([str(tmp_path / 'nothing')])
    with pytest.raises(OSError):
        process.Process(['no-such-program-for-cinnabar-tests'])


def test_wait_timeout():
    child = process.Process(['sleep', '5'], stdin=None, stdout=None)
    with pytest.raises(process.TimeoutExpired):
        child.wait(timeout=0.05)
    assert child.poll() is None
    os.kill(child.pid, 9)
    assert child.wait(timeout=5) == -9


def test_sigpipe_is_back_to_default():
    """Python ignores SIGPIPE; its children must not: a writer to a pipe
    nobody reads any more dies of it, as with subprocess."""
    child = process.Process(['yes'], stdin=None, stderr=process.DEVNULL)
    assert child.stdout.readline() == b'y\n'
    child.stdout.close()
    assert child.wait(timeout=10) == -13  # SIGPIPE
