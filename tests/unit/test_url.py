"""Parsing of hg:: URLs."""

import pytest

from cinnabar.errors import Abort
from cinnabar.hg.url import parse_url, strip_prefix
from cinnabar.redact import redact_text


def test_strip_prefix():
    assert strip_prefix('hg::https://x/y') == 'https://x/y'
    assert strip_prefix('https://x/y') == 'https://x/y'


@pytest.mark.parametrize('text', ['hg::https://u:pw@example.com:8080/r',
                                  'https://u:pw@example.com:8080/r'])
def test_http(text):
    url = parse_url(text)
    assert url.scheme == 'https'
    assert (url.user, url.host, url.port) == ('u', 'example.com', 8080)
    assert url.url == 'https://u:pw@example.com:8080/r'
    assert url.display == 'https://u@example.com:8080/r'


def test_ssh_relative_and_absolute():
    url = parse_url('hg::ssh://me@host:2222/some/repo')
    assert (url.scheme, url.user, url.host, url.port, url.path) == \
        ('ssh', 'me', 'host', 2222, 'some/repo')
    assert parse_url('ssh://host//srv/repo').path == '/srv/repo'
    assert parse_url('ssh://host').path == '.'


def test_ssh_ipv6_and_quoting():
    url = parse_url('ssh://[::1]:22/a%20b')
    assert (url.host, url.port, url.path) == ('::1', 22, 'a b')


def test_ssh_password_hidden():
    assert parse_url('ssh://me:secret@host/r').display == 'ssh://me@host/r'


def test_file_urls():
    assert parse_url('hg::file:///tmp/a%20b').path == '/tmp/a b'
    assert parse_url('file://localhost/tmp/x').path == '/tmp/x'
    with pytest.raises(Abort):
        parse_url('file://elsewhere/tmp/x')


def test_paths():
    assert parse_url('hg::/abs/path').path == '/abs/path'
    assert parse_url('rel/path', cwd='/work').path == '/work/rel/path'
    assert parse_url('hg::../up', cwd='/work/x').path == '/work/up'
    assert parse_url('name:with-colon', cwd='/w').path == \
        '/w/name:with-colon'


@pytest.mark.parametrize('given,meant', [
    ('hg://foo.com/foo', 'https://foo.com/foo'),
    ('hg://foo.com:8443/foo', 'https://foo.com:8443/foo'),
    ('hg://foo.com:http/foo', 'http://foo.com/foo'),
    ('hg://foo.com:8080.http/foo', 'http://foo.com:8080/foo'),
    ('hg://u@host:ssh/repo', 'ssh://u@host/repo'),
    ('hg://:file/foo/bar', 'file:///foo/bar'),
    ('hg://:tags', 'tags:'),
    ('hg://[::1]:8000.http/r?x', 'http://[::1]:8000/r?x'),
    # The user part first: a password with `:` is no port.
    ('hg://u:pw@host:8080.http/r', 'http://u:pw@host:8080/r'),
    ('hg://u:p:w@host:http/r', 'http://u:p:w@host/r'),
    ('hg://u:pw@host/r', 'https://u:pw@host/r'),
    ('hg://u:pw@[::1]:8000.http/r', 'http://u:pw@[::1]:8000/r'),
    ('hg://u:pw@host:ssh/r', 'ssh://u:pw@host/r'),
    ('hg://host:8080.http/r@x', 'http://host:8080/r@x'),
])
def test_hg_scheme_urls(given, meant):
    """git-cinnabar's hg:// spelling (its test cases, and ours)."""
    assert strip_prefix(given) == meant
    if meant != 'tags:':
        assert parse_url(given).url == meant


@pytest.mark.parametrize('text', [
    'hg://u:S3cret@host:x8.http/r', 'hg://u:S3cret@host:8080./r',
    'hg::hg://u:S3cret@host:x8.http/r', 'hg::http://u:S3cret@host:x8/r',
])
def test_errors_do_not_show_the_password(text):
    """What is shown of the error (through cinnabar.redact, as every
    message is) holds no password."""
    with pytest.raises(Abort) as error:
        parse_url(text)
    assert 'S3cret' not in redact_text(str(error.value))


def test_unsupported():
    with pytest.raises(Abort):
        parse_url('hg://example.com:x8.http/repo')
    with pytest.raises(Abort):
        parse_url('ftp://example.com/repo')
    with pytest.raises(Abort):
        parse_url('ssh://host:port/repo')
