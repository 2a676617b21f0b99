"""Building the ssh command line."""

import pytest

from cinnabar.errors import Abort
from cinnabar.hg.sshtransport import quote_for_shell, ssh_argv
from cinnabar.hg.url import parse_url


def argv(url, environ=None, config=None):
    config = config or {}
    return ssh_argv(parse_url(url), environ or {}, config.get)


def test_plain_ssh():
    assert argv('ssh://host/repo') == [
        'ssh', 'host', 'hg -R repo serve --stdio']
    assert argv('ssh://me@host:2222//srv/repo') == [
        'ssh', '-p', '2222', 'me@host', 'hg -R /srv/repo serve --stdio']


def test_path_quoting():
    assert argv('ssh://host/a%20b')[-1] == "hg -R 'a b' serve --stdio"
    assert quote_for_shell("it's") == "'it'\\''s'"
    assert quote_for_shell('a/b-c.d_e@f') == 'a/b-c.d_e@f'


def test_git_ssh_command_runs_through_the_shell():
    result = argv('ssh://host:22/r', {'GIT_SSH_COMMAND': 'ssh -v'})
    assert result == ['sh', '-c', 'ssh -v "$@"', 'ssh -v', '-p', '22',
                      'host', 'hg -R r serve --stdio']


def test_core_ssh_command():
    result = argv('ssh://host/r', config={'core.sshCommand': 'myssh -x'})
    assert result[:4] == ['sh', '-c', 'myssh -x "$@"', 'myssh -x']


def test_git_ssh_command_wins_over_config_and_git_ssh():
    result = argv('ssh://host/r', {'GIT_SSH_COMMAND': 'a', 'GIT_SSH': 'b'},
                  {'core.sshCommand': 'c'})
    assert result[2] == 'a "$@"'


def test_git_ssh_program():
    assert argv('ssh://host/r', {'GIT_SSH': '/usr/bin/ssh'}) == [
        '/usr/bin/ssh', 'host', 'hg -R r serve --stdio']


@pytest.mark.parametrize('program, options', [
    ('/opt/plink', ['-P', '22']),
    ('putty.exe', ['-P', '22']),
    ('TortoisePlink.exe', ['-batch', '-P', '22']),
    ('myssh', ['-p', '22']),
])
def test_variants_from_program(program, options):
    assert argv('ssh://host:22/r', {'GIT_SSH': program})[1:-2] == options


def test_variant_setting():
    assert argv('ssh://host:22/r', {'GIT_SSH_VARIANT': 'plink'})[1:3] == \
        ['-P', '22']
    assert argv('ssh://host/r', config={'ssh.variant': 'tortoiseplink'})[1] \
        == '-batch'
    with pytest.raises(Abort):
        argv('ssh://host:22/r', {'GIT_SSH_VARIANT': 'simple'})
    assert argv('ssh://host/r', {'GIT_SSH_VARIANT': 'simple'}) == [
        'ssh', 'host', 'hg -R r serve --stdio']
    with pytest.raises(Abort):
        argv('ssh://host/r', {'GIT_SSH_VARIANT': 'bogus'})


@pytest.mark.parametrize('url', ['ssh://-oProxyCommand=x/r',
                                 'ssh://-me@host/r',
                                 'ssh://host/-r'])
def test_option_injection_refused(url):
    with pytest.raises(Abort) as error:
        argv(url)
    assert 'blocked' in error.value.message
