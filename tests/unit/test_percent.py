"""Percent-encoding and URL splitting without urllib.parse
(cinnabar.hg.percent, cinnabar.hg.url.split_url): the same answers as
urllib.parse, the oracle, on ordinary and unusual input."""

import random
import urllib.parse

import pytest

from cinnabar.hg import percent
from cinnabar.hg.url import join_url, split_url, url_scheme

TEXTS = ['', 'abc', 'a b', 'a+b', 'a/b?c=d&e#f', '~_.-', '%', '%2', '%2g',
         '%20%2F%zz%', 'caf\xe9', '\u20ac 1', 'x\ny\tz', "!$&'()*+,;=:@[]",
         'branchmap ;heads ;listkeys namespace=bookmarks']


def _random_texts(count=300):
    rng = random.Random(1)
    alphabet = 'aZ09 %+/?#&=~:@[]\xe9\u20ac\n%2F%zz'
    return [''.join(rng.choice(alphabet) for _ in range(rng.randrange(12)))
            for _ in range(count)]


@pytest.mark.parametrize('safe', ['', '/', ' ', ":/?#[]@!$&'()*+,;=%~"])
def test_quote_as_urllib(safe):
    for text in TEXTS + _random_texts():
        assert percent.quote(text, safe) == urllib.parse.quote(text, safe)
        data = text.encode('utf-8')
        assert percent.quote(data, safe) == urllib.parse.quote(data, safe)


def test_urlencode_as_urllib():
    texts = TEXTS + _random_texts()
    pairs = list(zip(texts, reversed(texts))) + [('n', 3), (b'a b', b'c+d')]
    assert percent.urlencode(pairs) == urllib.parse.urlencode(pairs)
    assert percent.urlencode(dict(pairs[:5])) == \
        urllib.parse.urlencode(dict(pairs[:5]))


def test_unquote_to_bytes_as_urllib():
    for text in TEXTS + _random_texts() + ['%C3%A9%c3%a9', '% 1%+1%1_']:
        assert percent.unquote_to_bytes(text) == \
            urllib.parse.unquote_to_bytes(text)
        data = text.encode('utf-8')
        assert percent.unquote_to_bytes(data) == \
            urllib.parse.unquote_to_bytes(data)


def test_unquote_as_urllib():
    for text in TEXTS + _random_texts() + [
            '%C3%A9%c3%a9', '% 1%+1%1_', '%C3\xe9%A9', '\xe9%A9%E2%82',
            '%E2%82\u20ac%82', '%ff%fe', 'a\udce9%41\udce9%C3', '\xe9']:
        assert percent.unquote(text) == urllib.parse.unquote(text)


URLS = ['http://h', 'http://h/', 'HTTP://h:80/p?q#f', 'https://u:p@h:1/a/b',
        'http://h/?', 'http://h/#', 'http://h?x', 'http://h#x/y?z',
        'http://h/p?a=b?c#d#e', 'http://u@h%41/p%20', 'http:///p', 'http:/p',
        'http:p', 'http://', 'https://[::1]:8000/r', 'http://h/caf\xe9',
        'http://h\xe9/', ' http://h/', 'http://h/a b', 'http://h/a\tb',
        'http://h/a\nb', 'http://[::1/', 'svn+ssh://h/x', 'http://h:x/p']


@pytest.mark.parametrize('url', URLS)
def test_split_and_join_as_urllib(url):
    try:
        expected = urllib.parse.urlsplit(url)
    except ValueError:
        with pytest.raises(ValueError):
            split_url(url)
        return
    parts = split_url(url)
    assert tuple(parts) == tuple(expected)
    assert join_url(parts) == urllib.parse.urlunsplit(expected)


def test_url_scheme():
    assert url_scheme('HTTP://x') == 'http'
    assert url_scheme('svn+ssh://x') == 'svn+ssh'
    assert url_scheme('c:/x') == 'c'
    for text in ('/a:b', '1a:b', 'a b:c', ':x', 'abc', '', '\xe9:x'):
        assert url_scheme(text) is None
