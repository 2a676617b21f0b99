"""How failures reach people."""

from cinnabar.errors import Abort, run_guarded


def fails_with(error):
    def main(argv):
        raise error
    return main


def test_abort_with_hint(capsys):
    assert run_guarded(fails_with(Abort('it broke', hint='fix it')), []) == 1
    assert capsys.readouterr().err == 'fatal: it broke\nhint: fix it\n'


def test_bug_says_how_to_see_the_traceback(capsys, monkeypatch):
    monkeypatch.delenv('GIT_CINNABAR_TRACEBACK', raising=False)
    assert run_guarded(fails_with(KeyError('x')), []) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == ["fatal: unexpected error: KeyError: 'x'",
                   'hint: run again with GIT_CINNABAR_TRACEBACK=1 in the '
                   'environment to see the traceback']


def test_traceback_on_request(capsys, monkeypatch):
    monkeypatch.setenv('GIT_CINNABAR_TRACEBACK', '1')
    assert run_guarded(fails_with(KeyError('x')), []) == 1
    assert 'Traceback' in capsys.readouterr().err


def test_interrupt(capsys):
    assert run_guarded(fails_with(KeyboardInterrupt()), []) == 130
    assert capsys.readouterr().err == 'fatal: interrupted\n'


def test_success():
    assert run_guarded(lambda argv: None, []) == 0
    assert run_guarded(lambda argv: 3, []) == 3
