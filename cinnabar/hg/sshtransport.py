"""Mercurial over ssh: `ssh [-p port] [user@]host 'hg -R path serve --stdio'`.

The ssh program is chosen as git chooses it: the GIT_SSH_COMMAND
environment variable, else the `core.sshCommand` configuration (both run
through the shell, with the arguments appended), else GIT_SSH (a program,
run without the shell), else `ssh`. How to pass the port depends on the
program's variant, taken from GIT_SSH_VARIANT, else `ssh.variant`, else
the program's name: `ssh` (OpenSSH, `-p`), `plink` and `putty` (`-P`),
`tortoiseplink` (`-batch -P`), `simple` (no options: no port). Unknown
program names are taken for OpenSSH.

A host or path starting with `-` is refused: ssh would read it as an
option.

ssh passes the server's standard error on its own, mixed with its own
messages: those are not labelled `remote:` (`ssh_says`). A command (in
GIT_SSH_COMMAND or core.sshCommand) that is not found is refused before
it runs, rather than leaving the shell to say so in words that would
read as the server's.
"""

import os
import re
import shlex
import shutil

from cinnabar import git
from cinnabar.errors import Abort
from cinnabar.hg.stdio import StdioTransport

VARIANTS = ('ssh', 'plink', 'putty', 'tortoiseplink', 'simple')
# Characters that need no quoting in the remote command (as Mercurial's
# ssh client does it).
_SHELL_SAFE = re.compile(r'[A-Za-z0-9@%_+=:,./-]+\Z')
# What ssh says itself before a server answers: OpenSSH starts its errors
# with `ssh: ` (`ssh: Could not resolve hostname ...`, `ssh: connect to
# host ...`); the two others are only ever its own.
_SSH_OWN = re.compile(rb'ssh: |Host key verification failed\.|'
                      rb'Permission denied \(')
# Words a shell runs without a program of that name.
_SHELL_WORDS = ('exec', 'command', 'eval', 'env', '.', 'builtin')
MISSING_HINT = 'install ssh, or set GIT_SSH or GIT_SSH_COMMAND'


def ssh_says(line):
    """Whether a line of ssh's standard error is ssh's own."""
    return bool(_SSH_OWN.match(line))


def quote_for_shell(text):
    if _SHELL_SAFE.match(text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def remote_command(path):
    return 'hg -R %s serve --stdio' % quote_for_shell(path)


def _variant_from_program(program):
    name = os.path.basename(program).lower()
    if name.endswith('.exe'):
        name = name[:-len('.exe')]
    return name if name in ('plink', 'putty', 'tortoiseplink') else 'ssh'


def _program(environ, config_get):
    """(program or shell command, whether to use the shell)."""
    command = environ.get('GIT_SSH_COMMAND') or config_get('core.sshCommand')
    if command:
        return command, True
    program = environ.get('GIT_SSH')
    if program:
        return program, False
    return 'ssh', False


def _variant(program, use_shell, environ, config_get):
    variant = environ.get('GIT_SSH_VARIANT') or config_get('ssh.variant')
    if variant and variant != 'auto':
        if variant not in VARIANTS:
            raise Abort('unknown ssh variant %r' % variant,
                        hint='ssh.variant must be one of %s'
                             % ', '.join(VARIANTS))
        return variant
    if use_shell:
        words = shlex.split(program)
        program = words[0] if words else 'ssh'
    return _variant_from_program(program)


def _port_options(variant, port):
    if port is None:
        return ['-batch'] if variant == 'tortoiseplink' else []
    if variant == 'simple':
        raise Abort('ssh variant "simple" does not support setting a port')
    if variant == 'ssh':
        return ['-p', str(port)]
    if variant == 'tortoiseplink':
        return ['-batch', '-P', str(port)]
    return ['-P', str(port)]


def ssh_argv(url, environ, config_get):
    """The argv running `hg serve --stdio` at an ssh HgUrl.

    `environ` is a mapping like os.environ and `config_get(key)` returns a
    git configuration value or None."""
    userhost = '%s@%s' % (url.user, url.host) if url.user else url.host
    if userhost.startswith('-'):
        raise Abort('strange hostname %r blocked' % userhost)
    if url.path.startswith('-'):
        raise Abort('strange pathname %r blocked' % url.path)
    program, use_shell = _program(environ, config_get)
    variant = _variant(program, use_shell, environ, config_get)
    args = _port_options(variant, url.port) + [userhost,
                                               remote_command(url.path)]
    if use_shell:
        return ['sh', '-c', program + ' "$@"', program] + args
    return [program] + args


def check_found(program, use_shell):
    """Refuse a shell command whose program is not found (a program run
    without the shell fails to start, which says so already)."""
    if not use_shell:
        return
    try:
        words = shlex.split(program)
    except ValueError:
        return      # the shell says what is wrong with it
    first = words[0] if words else ''
    # What the shell expands, or runs itself, is left to it.
    if not first or first in _SHELL_WORDS or any(
            c in first for c in '=$~`*?['):
        return
    if shutil.which(first) is None:
        raise Abort('cannot run %s: command not found' % first,
                    hint=MISSING_HINT)


def connect(url):
    """A StdioTransport to the repository at an ssh HgUrl."""
    check_found(*_program(os.environ, git.config))
    argv = ssh_argv(url, os.environ, git.config)
    return StdioTransport(argv, url.display, missing_hint=MISSING_HINT,
                          own_line=ssh_says)
