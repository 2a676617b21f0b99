"""URLs shown without user and password (cinnabar.redact), in traces too,
and the bounds of answers (httptransport.inflate, stdio lengths)."""

import zlib

import pytest

from cinnabar.errors import Abort
from cinnabar.hg.httptransport import check_redirect, inflate
from cinnabar.redact import redact_text, redact_url


def test_redact_url():
    assert redact_url('https://u:p@h:1/r?x=a@b') == 'https://h:1/r?x=a@b'
    assert redact_url('http://u:p@ss@h/') == 'http://h/'
    assert redact_url('https://h/path@x') == 'https://h/path@x'
    assert redact_url('/some/path') == '/some/path'


def test_redact_text():
    text = 'wire> GET http://alice:s3cret@127.0.0.1:8000/?cmd=batch x@y'
    assert redact_text(text) == (
        'wire> GET http://127.0.0.1:8000/?cmd=batch x@y')


def test_redirects():
    check_redirect('http://a/', 'https://b/')
    check_redirect('https://a/', 'https://b/')
    for new in ('http://b/', 'file:///etc/passwd', 'ftp://b/'):
        with pytest.raises(Abort):
            check_redirect('https://a/', new)


def test_inflate_is_bounded():
    bomb = zlib.compress(b'\0' * (1 << 20))
    assert len(inflate(bomb, 1 << 20)) == 1 << 20
    with pytest.raises(Abort, match='larger than'):
        inflate(bomb, (1 << 20) - 1)
    with pytest.raises(Abort, match='cut short'):
        inflate(bomb[:len(bomb) // 2], 1 << 20)
    with pytest.raises(Abort, match='damaged'):
        inflate(b'not zlib', 100)
