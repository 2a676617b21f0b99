"""Wire protocol v1 argument encoding and answer decoding."""

from urllib.parse import quote, unquote

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import wireformat as wf
from cinnabar.ids import HgId

A = 'a' * 40
B = 'b' * 40
NULL = '0' * 40


def test_parse_capabilities():
    caps = wf.parse_capabilities(
        b'lookup branchmap httpheader=1024 bundle2=HG20%0Achangegroup%3D01 '
        b'unbundle=HG10GZ,HG10BZ,HG10UN')
    assert caps['lookup'] == b''
    assert caps['httpheader'] == b'1024'
    assert caps['unbundle'] == b'HG10GZ,HG10BZ,HG10UN'
    assert caps['bundle2'] == b'HG20%0Achangegroup%3D01'
    assert 'known' not in caps


def test_bundle2_caps_round_trip():
    caps = (('HG20', ()), ('changegroup', ('01', '02')),
            ('ab%d', ('foo\nbar',)), ('hoge', ('fuga,', 'toto')))
    encoded = wf.encode_bundle2_caps(caps)
    assert encoded == ('HG20\nchangegroup=01,02\nab%25d=foo%0Abar\n'
                       'hoge=fuga%2C,toto')
    decoded = wf.decode_bundle2_caps(quote(encoded, safe='').encode())
    assert decoded == {'HG20': [], 'changegroup': ['01', '02'],
                       'ab%d': ['foo\nbar'], 'hoge': ['fuga,', 'toto']}


def test_getbundle_bundlecaps():
    value = wf.getbundle_bundlecaps()
    first, rest = value.split(',', 1)
    assert first == 'HG20'
    assert rest.startswith('bundle2=')
    assert unquote(rest[len('bundle2='):]) == 'HG20\nchangegroup=01,02'
    # The value is comma-separated: the bundle2 blob must hide its commas.
    assert value.count(',') == 1


@pytest.mark.parametrize('plain, escaped', [
    ('', ''),
    ('abc', 'abc'),
    ('a:b', 'a:cb'),
    ('a,b;c=d', 'a:ob:sc:ed'),
    (':e', ':ce'),
    ('::=', ':c:c:e'),
])
def test_batch_escaping(plain, escaped):
    assert wf.escape_batch(plain) == escaped
    assert wf.unescape_batch(escaped) == plain


def test_encode_batch():
    cmds = wf.encode_batch([('branchmap', {}), ('heads', {}),
                            ('listkeys', {'namespace': 'bookmarks'}),
                            ('known', {'nodes': A + ' ' + B})])
    assert cmds == ('branchmap ;heads ;listkeys namespace=bookmarks;'
                    'known nodes=%s %s' % (A, B))


def test_encode_batch_escapes_values():
    assert wf.encode_batch([('lookup', {'key': 'a=b;c'})]) == \
        'lookup key=a:eb:sc'


def test_decode_batch():
    assert wf.decode_batch(b'one;t:ewo;', 3) == [b'one', b't=wo', b'']
    with pytest.raises(Abort):
        wf.decode_batch(b'one;two', 3)


def test_decode_nodes_drops_null():
    assert wf.decode_nodes(('%s %s\n' % (A, B)).encode()) == [A, B]
    assert wf.decode_nodes((NULL + '\n').encode()) == []
    with pytest.raises(Abort):
        wf.decode_nodes(b'nothex\n')


def test_decode_known():
    assert wf.decode_known(b'0110', 4) == [False, True, True, False]
    assert wf.decode_known(b'', 0) == []
    with pytest.raises(Abort):
        wf.decode_known(b'01', 3)
    with pytest.raises(Abort):
        wf.decode_known(b'0x1', 3)


def test_decode_branchmap():
    data = ('default %s %s\nmy%%20branch %s\nstable%%2Fx %s' %
            (A, B, B, A)).encode()
    assert wf.decode_branchmap(data) == [
        ('default', [A, B]), ('my branch', [B]), ('stable/x', [A])]
    assert wf.decode_branchmap(b'') == []


def test_decode_branchmap_non_utf8():
    name, heads = wf.decode_branchmap(('caf%%E9 %s' % A).encode())[0]
    assert name.encode('utf-8', 'surrogateescape') == b'caf\xe9'


def test_decode_listkeys():
    data = ('%s\t1\npublishing\tTrue\n' % A).encode()
    assert wf.decode_listkeys(data) == {A: '1', 'publishing': 'True'}
    assert wf.decode_listkeys(b'') == {}
    with pytest.raises(Abort):
        wf.decode_listkeys(b'no tab here')


def test_decode_bookmarks():
    data = ('@\t%s\nfeat\xc3\xa9\t%s' % (A, B)).encode('latin-1')
    bookmarks = wf.decode_bookmarks(data)
    assert bookmarks == {'@': A, 'feat\xe9': B}
    assert list(bookmarks) == ['@', 'feat\xe9']


def test_decode_lookup():
    assert wf.decode_lookup(('1 %s\n' % A).encode(), 'tip') == A
    with pytest.raises(Abort) as error:
        wf.decode_lookup(b"0 unknown revision 'foo'\n", 'foo')
    assert "unknown revision 'foo'" in error.value.message


def test_encode_nodes():
    assert wf.encode_nodes([A, B]) == A + ' ' + B
    assert wf.encode_nodes([]) == ''
    with pytest.raises(ValueError):
        wf.encode_nodes(['abc'])


def test_split_topics():
    heads = [HgId('1' * 40)]
    fqbn = [(name, heads) for name in (
        'default', 'a//b//', 'default//feature', 'stable//ns/other',
        'a//b//x')]
    assert wf.split_topics(fqbn, 'fqbn') == (
        [('default', heads), ('a//b', heads)],
        [(('default', 'feature'), heads), (('a//b', 'x'), heads)])
    colon = [('default', heads), ('stable:fix', heads)]
    assert wf.split_topics(colon, 'colon') == (
        [('default', heads)], [(('stable', 'fix'), heads)])


@pytest.mark.parametrize('text,value', [
    ('0', 0), ('400', 400), (b'12', 12), ('9' * 20, int('9' * 20)),
    ('', None), ('²', None), ('²34', None), ('\u0663', None), ('-1', None),
    (' 1', None), ('1 ', None), ('+1', None), ('1_0', None),
    ('9' * 21, None), ('9' * 5000, None), (b'\xb2', None),
])
def test_parse_decimal(text, value):
    """ASCII digits only (str.isdigit takes '²' and other scripts'
    digits), at most MAX_DIGITS of them."""
    assert wf.parse_decimal(text) == value


def test_manifests_problem():
    assert wf.manifests_problem({'streamreqs': b'revlogv1,treemanifest'}) \
        == 'has tree manifests'
    assert wf.manifests_problem({'streamreqs': b'revlogv1,generaldelta'}) \
        is None
    assert wf.manifests_problem({}) is None
