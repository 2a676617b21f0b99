"""HTTP request building and answer decoding (the helper is faked)."""

import io
import zlib
from urllib.parse import parse_qsl, urlsplit

import pytest

from cinnabar.errors import Abort
from cinnabar.helper import HttpResponse
from cinnabar.hg import bundle2, httptransport as ht

A = 'a' * 40


class FakeBody(io.BytesIO):
    def drain(self):
        self.read()


class FakeHelper:
    """Answers http_fetch with canned responses, recording requests."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests = []
        self.imported = []

    def http_fetch(self, url, headers=(), body=None, before_answer=None):
        self.requests.append((url, headers, body))
        status, content_type, data = self.responses.pop(0)
        headers = {'content-type': content_type} if content_type else {}
        return HttpResponse(status, headers, FakeBody(data))

    def http_import(self, url, headers, body, kind='bundle'):
        self.requests.append((url, headers, body))
        self.imported.append(kind)
        return 200, (1, 0, 0)

    def capabilities(self):
        return {'http', 'zlib'}


def transport(caps=b'', *responses):
    helper = FakeHelper((200, ht.MEDIA_TYPE_1, caps), *responses)
    http = ht.HttpTransport('https://example.com/repo?x=1#frag',
                            'https://example.com/repo', helper)
    assert http.open() is None
    helper.requests.clear()
    return http, helper


def test_split_in_headers():
    parts = ht.split_in_headers('x' * 30, 'X-HgArg', 30)
    # Each line: 'X-HgArg-N: ' + value + CRLF fits in 30 bytes.
    assert [name for name, _ in parts] == ['X-HgArg-1', 'X-HgArg-2']
    assert ''.join(v for _, v in parts) == 'x' * 30
    assert all(len(v) <= 30 - len('X-HgArg-000: \r\n') for _, v in parts)
    with pytest.raises(Abort):
        ht.split_in_headers('x', 'X-HgArg', 10)


def test_header_limit():
    assert ht.header_limit(b'1024') == 1024
    assert ht.header_limit(b'2048,future') == 2048
    assert ht.header_limit(None) == 0
    assert ht.header_limit(b'') == 0


def test_decode_v2():
    assert ht.decode_v2(b'\x04none' + b'data') == b'data'
    assert ht.decode_v2(b'\x04zlib' + zlib.compress(b'data')) == b'data'
    with pytest.raises(Abort):
        ht.decode_v2(b'\x04zstd' + b'...')


def test_open_strips_query_and_reads_capabilities():
    http, helper = transport(b'lookup httpheader=1024')
    assert http.url == 'https://example.com/repo'
    assert http.capabilities() == b'lookup httpheader=1024'


def test_arguments_in_query_without_httpheader():
    http, helper = transport(b'known', (200, ht.MEDIA_TYPE_1, b'1'))
    assert http.call('known', {'nodes': A}) == b'1'
    url, headers, body = helper.requests[0]
    query = dict(parse_qsl(urlsplit(url).query))
    assert query == {'cmd': 'known', 'nodes': A}
    assert body is None
    assert ('User-Agent', 'mercurial/proto-1.0') in headers


def test_arguments_in_headers():
    http, helper = transport(b'httpheader=100',
                             (200, ht.MEDIA_TYPE_1, b'1'))
    http.call('known', {'nodes': A + ' ' + A})
    url, headers, body = helper.requests[0]
    assert urlsplit(url).query == 'cmd=known'
    args = [(n, v) for n, v in headers if n.startswith('X-HgArg-')]
    assert len(args) > 1
    assert all(len('%s: %s\r\n' % (n, v)) <= 100 for n, v in args)
    assert dict(parse_qsl(''.join(v for _, v in args))) == \
        {'nodes': A + ' ' + A}
    vary = dict(headers)['Vary'].split(',')
    assert vary == [n for n, _ in args]


def test_arguments_posted():
    http, helper = transport(b'httppostargs httpheader=1024',
                             (200, ht.MEDIA_TYPE_1, b'ok'))
    http.call('listkeys', {'namespace': 'bookmarks'})
    url, headers, body = helper.requests[0]
    assert body == b'namespace=bookmarks'
    assert dict(headers)['X-HgArgs-Post'] == str(len(body))
    assert not any(n.startswith('X-HgArg-') for n, _ in headers)


def test_protocol_header_only_when_server_sends_v2():
    http, helper = transport(b'', (200, ht.MEDIA_TYPE_1, b''))
    http.call('heads', {})
    assert 'X-HgProto-1' not in dict(helper.requests[0][1])
    http, helper = transport(b'httpmediatype=0.1rx,0.1tx,0.2tx',
                             (200, ht.MEDIA_TYPE_2, b'\x04none' + A.encode()))
    assert http.call('heads', {}) == A.encode()
    assert dict(helper.requests[0][1])['X-HgProto-1'] == \
        '0.1 0.2 comp=zlib,none'


def test_errors():
    http, helper = transport(b'', (200, ht.ERROR_TYPE, b'boom'))
    with pytest.raises(Abort) as error:
        http.call('heads', {})
    assert 'boom' in error.value.message
    for status, word in ((401, 'authentication'), (404, 'not found'),
                         (500, 'HTTP error 500')):
        http, helper = transport(b'', (status, 'text/html', b'<html>'))
        with pytest.raises(Abort) as error:
            http.call('heads', {})
        assert word in error.value.message


def test_not_mercurial():
    """Neither a Mercurial answer nor git's smart HTTP (asked next)."""
    helper = FakeHelper((200, 'text/html', b'<html>'),
                        (404, 'text/plain', b'not found'))
    with pytest.raises(Abort) as error:
        ht.HttpTransport('https://x/r', 'https://x/r', helper).open()
    assert 'Mercurial' in error.value.message
    assert helper.requests[1][0].endswith(
        '/info/refs?service=git-upload-pack')


def test_bundle_url_is_detected():
    helper = FakeHelper((200, 'application/octet-stream', b'HG20rest'))
    head, body = ht.HttpTransport('https://x/b.hg', 'x', helper).open()
    assert head + body.read() == b'HG20rest'


def test_redirect_followed(capsys):
    helper = FakeHelper((301, None, b''), (200, ht.MEDIA_TYPE_1, b'known'))
    original = helper.http_fetch

    def with_location(url, headers, body, before_answer=None):
        response = original(url, headers, body)
        if response.status == 301:
            response.headers['location'] = 'https://y/new?cmd=capabilities'
        return response
    helper.http_fetch = with_location
    http = ht.HttpTransport('https://x/old', 'https://x/old', helper)
    assert http.open() is None
    assert http.url == 'https://y/new'
    assert helper.requests[1][0].startswith('https://y/new?cmd=capabilities')
    assert 'redirecting to https://y/new' in capsys.readouterr().err


def test_bundle1_getbundle_goes_to_the_helper():
    """A bundle1 answer is imported by the helper as it comes (`http
    import ... cg01`), not decoded here."""
    http, helper = transport(b'getbundle httpmediatype=0.2tx')
    assert http.import_stream('getbundle', {'heads': A}, 'cg01',
                              helper) == (1, 0, 0)
    assert helper.imported == ['cg01']
    url, headers, body = helper.requests[0]
    assert dict(headers)['X-HgProto-1'] == '0.1 0.2 comp=zlib,none'


def test_bundle2_getbundle_goes_to_the_helper():
    http, helper = transport(b'httpmediatype=0.2tx')
    http.import_stream('getbundle', {'heads': A}, 'bundle', helper)
    url, headers, body = helper.requests[0]
    assert dict(headers)['X-HgProto-1'] == '0.1 0.2 comp=zlib,none'


def test_unbundle_sends_the_bundle_file():
    out = io.BytesIO()
    bundle2.write_start(out)
    bundle2.write_part(out, 'reply:changegroup', 0,
                       advisory_params=[('return', '1')])
    bundle2.write_end(out)
    reply = out.getvalue()
    http, helper = transport(b'httppostargs httpheader=1024 unbundle',
                             (200, ht.MEDIA_TYPE_1, reply))
    parts = http.unbundle({'heads': b'force'.hex()}, '/tmp/b.hg', True)
    assert [(p.type, p.params) for p in parts] == [
        ('reply:changegroup', {'return': '1'})]
    url, headers, body = helper.requests[0]
    assert body is None
    assert urlsplit(url).query == 'cmd=unbundle'
    headers = dict(headers)
    assert headers['X-Cinnabar-Body-File'] == '/tmp/b.hg'
    assert headers['Content-Type'] == ht.MEDIA_TYPE_1
    # The body is the bundle: the arguments go in headers.
    assert 'X-HgArgs-Post' not in headers
    assert headers['X-HgArg-1'] == 'heads=' + b'force'.hex()
    assert 'X-HgProto-1' not in headers


def test_unbundle_bundle1_answer():
    http, helper = transport(b'unbundle',
                             (200, ht.MEDIA_TYPE_1, b'0\nhook failed\n'))
    assert http.unbundle({'heads': A}, '/tmp/b.hg', False) == \
        (b'0', b'hook failed\n')
    url, _, _ = helper.requests[0]
    query = dict(parse_qsl(urlsplit(url).query))
    assert query == {'cmd': 'unbundle', 'heads': A}


def test_unbundle_refused():
    http, helper = transport(b'unbundle', (403, ht.ERROR_TYPE, b'denied'))
    with pytest.raises(Abort) as error:
        http.unbundle({'heads': A}, '/tmp/b.hg', False)
    assert 'denied' in error.value.message


def test_pushkey_is_a_post():
    http, helper = transport(b'pushkey httpheader=1024',
                             (200, ht.MEDIA_TYPE_1, b'1\n'))
    assert http.call('pushkey', {'namespace': 'bookmarks', 'key': 'k',
                                 'old': '', 'new': A}) == b'1\n'
    url, headers, body = helper.requests[0]
    headers = dict(headers)
    assert body is None
    assert headers['X-Cinnabar-Body-File']
    assert dict(parse_qsl(headers['X-HgArg-1'], keep_blank_values=True)) == {
        'namespace': 'bookmarks', 'key': 'k', 'old': '', 'new': A}
    http, helper = transport(b'pushkey httppostargs',
                             (200, ht.MEDIA_TYPE_1, b'1\n'))
    http.call('pushkey', {'namespace': 'bookmarks', 'key': 'k', 'old': '',
                          'new': A})
    url, headers, body = helper.requests[0]
    assert body and 'X-Cinnabar-Body-File' not in dict(headers)
