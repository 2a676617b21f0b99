"""Parsing clone bundle manifests and bundlespecs, choosing an entry;
Content-Range and validators of resumable downloads."""

import pytest

from cinnabar import clonebundles
from cinnabar.clonebundles import Entry, choose, parse_manifest, why_unusable
from cinnabar.resumable import parse_content_range, validator

ALL = frozenset({'zlib', 'zstd', 'bzip2', 'http'})


def test_parse_manifest():
    data = (b'https://a/x.hg BUNDLESPEC=zstd-v2 REQUIRESNI=true\n'
            b'\n'
            b'https://b/y.hg BUNDLESPEC=none-v2%3Bstream%3Dv2 cdn=eu%20west\n'
            b'https://c/z.hg\n'
            b'https://d/broken.hg novalue\n')
    assert parse_manifest(data) == [
        Entry('https://a/x.hg', {'BUNDLESPEC': 'zstd-v2',
                                 'REQUIRESNI': 'true'}),
        Entry('https://b/y.hg', {'BUNDLESPEC': 'none-v2;stream=v2',
                                 'cdn': 'eu west'}),
        Entry('https://c/z.hg', {}),
    ]


@pytest.mark.parametrize('spec, result', [
    ('zstd-v2', ('zstd', 'v2', {})),
    ('gzip-v1', ('gzip', 'v1', {})),
    ('none-v2;stream=v2', ('none', 'v2', {'stream': 'v2'})),
    ('zstd-v2;obsolescence=true;phases=true',
     ('zstd', 'v2', {'obsolescence': 'true', 'phases': 'true'})),
    ('none-packed1;requirements%3Drevlogv1',
     ValueError),
    ('v2', ValueError),
    ('-v2', ValueError),
])
def test_parse_bundlespec(spec, result):
    if result is ValueError:
        with pytest.raises(ValueError):
            clonebundles.parse_bundlespec(spec)
    else:
        assert clonebundles.parse_bundlespec(spec) == result


@pytest.mark.parametrize('url, attributes, engines, reason', [
    ('https://h/b', {'BUNDLESPEC': 'zstd-v2'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'bzip2-v1'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'none-v3'}, ALL, None),
    ('http://h/b', {}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'zstd-v2'}, {'zlib'}, 'without zstd'),
    ('http://h/b', {'BUNDLESPEC': 'zstd-v1'}, ALL, 'unknown compression'),
    ('http://h/b', {'BUNDLESPEC': 'lzma-v2'}, ALL, 'unknown compression'),
    ('http://h/b', {'BUNDLESPEC': 'none-v2;stream=v2'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'none-packed1'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'none-packed1;requirements=revlogv1%2C'
                                  'generaldelta'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'none-v2;stream=v2;requirements='
                                  'revlogv1%2Ctreemanifest'}, ALL,
     'requirements we do not read in a stream (treemanifest)'),
    ('http://h/b', {'BUNDLESPEC': 'none-streamv2'}, ALL,
     'stream clone bundle of a kind we do not read'),
    ('http://h/b', {'BUNDLESPEC': 'none-v2;stream=v3-exp'}, ALL, None),
    ('http://h/b', {'BUNDLESPEC': 'none-v2;stream=v4'}, ALL,
     'stream clone bundle of a kind we do not read'),
    ('http://h/b', {'BUNDLESPEC': 'zstd-v2;stream=v2'}, ALL,
     'compressed stream clone bundle'),
    ('http://h/b', {'BUNDLESPEC': 'gzip-v9'}, ALL, 'unknown bundle type'),
    ('http://h/b', {'BUNDLESPEC': 'v2'}, ALL, 'not <compression>-<type>'),
    ('peer-bundle-cache://b', {'BUNDLESPEC': 'zstd-v2'}, ALL, 'http(s)'),
    ('ftp://h/b', {}, ALL, 'http(s)'),
    ('http://[::1/b', {}, ALL, 'invalid URL'),
    ('http://[zz]/b', {}, ALL, 'invalid URL'),
    ('http://h:99999/b', {}, ALL, 'invalid URL'),
    ('http://h:x/b', {}, ALL, 'invalid URL'),
    ('http:///b', {}, ALL, 'no host'),
    ('http://[::1]:8000/b', {}, ALL, None),
])
def test_why_unusable(url, attributes, engines, reason):
    found = why_unusable(Entry(url, attributes), engines)
    if reason is None:
        assert found is None
    else:
        assert reason in found


def test_requiresni():
    entry = Entry('https://h/b', {'REQUIRESNI': 'true'})
    assert why_unusable(entry, ALL) is None
    assert why_unusable(entry, ALL, has_sni=False) == 'needs SNI'


def test_streams_can_be_refused():
    entry = Entry('https://h/b', {'BUNDLESPEC': 'none-packed1'})
    assert 'cinnabar.stream=never' in why_unusable(entry, ALL, streams=False)


def test_choose_keeps_server_order():
    entries = [Entry('https://h/stream', {'BUNDLESPEC': 'none-streamv3'}),
               Entry('https://h/second', {'BUNDLESPEC': 'gzip-v2'}),
               Entry('https://h/third', {'BUNDLESPEC': 'zstd-v2'})]
    assert choose(entries, ALL).url == 'https://h/second'
    assert choose(entries[:1], ALL) is None


@pytest.mark.parametrize('value, result', [
    ('bytes 100-199/1000', (100, 199, 1000)),
    ('bytes 0-0/*', (0, 0, None)),
    ('bytes */1000', (None, None, 1000)),
])
def test_parse_content_range(value, result):
    assert parse_content_range(value) == result


@pytest.mark.parametrize('value', [None, '', 'bytes 1-2', 'items 1-2/3'])
def test_parse_content_range_errors(value):
    with pytest.raises(ValueError):
        parse_content_range(value)


def test_validator():
    assert validator({'etag': '"abc"', 'last-modified': 'x'}) == '"abc"'
    assert validator({'etag': 'W/"abc"', 'last-modified': 'x'}) == 'x'
    assert validator({}) is None


@pytest.mark.parametrize('value, result', [
    (None, None), ('true', True), ('Yes', True), ('1', True),
    ('false', False), ('off', False), ('', False)])
def test_parse_bool(value, result):
    assert clonebundles.parse_bool(value, 'x') is result


def test_parse_bool_invalid():
    with pytest.raises(clonebundles.SettingError):
        clonebundles.parse_bool('maybe', 'cinnabar.clonebundles')
