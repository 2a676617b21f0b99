"""What a push sends with `unbundle` and how its answer reads
(cinnabar.hg.pushwire)."""

import hashlib
import io
from binascii import unhexlify

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import bundle2, pushwire as ub
from cinnabar.hg.bundle2 import Part
from cinnabar.hg.wireformat import decode_bundle2_caps, parse_capabilities

A = 'a' * 40
B = 'b' * 40
NULL = '0' * 40
BUNDLE2_CAPS = b'bundle2=HG20%0Achangegroup%3D01%2C02 unbundle=HG10GZ,HG10UN'


def test_push_format():
    caps = parse_capabilities(BUNDLE2_CAPS)
    assert ub.push_format(caps, 'x') == ub.PushFormat(True, '02')
    caps = parse_capabilities(b'bundle2=HG20%0Achangegroup%3D01 unbundle')
    assert ub.push_format(caps, 'x') == ub.PushFormat(True, '01')
    caps = parse_capabilities(b'unbundle=HG10GZ,HG10BZ,HG10UN')
    assert ub.push_format(caps, 'x') == ub.PushFormat(False, '01')
    caps = parse_capabilities(b'unbundle')
    assert ub.push_format(caps, 'x') == ub.PushFormat(False, '01')


@pytest.mark.parametrize('caps', [
    b'getbundle', b'unbundle=HG10GZ', b'unbundle bundle2=changegroup%3D03'])
def test_push_format_refused(caps):
    with pytest.raises(Abort):
        ub.push_format(parse_capabilities(caps), 'x')


def test_heads_argument():
    bundle2_format = ub.PushFormat(True, '02')
    bundle1_format = ub.PushFormat(False, '01')
    assert ub.heads_argument(bundle2_format, [A]) == b'force'.hex()
    assert ub.heads_argument(bundle1_format, [A, B]) == A + ' ' + B
    assert ub.heads_argument(bundle1_format, []) == NULL
    digest = hashlib.sha1(unhexlify(A) + unhexlify(B)).hexdigest()
    assert ub.heads_argument(bundle1_format, [B, A], hashed=True) == \
        b'hashed'.hex() + ' ' + digest


def test_bundle1():
    out = io.BytesIO()
    ub.write_bundle(out, ub.PushFormat(False, '01'), io.BytesIO(b'cg' * 10),
                    [A], 1)
    assert out.getvalue() == b'HG10UN' + b'cg' * 10


def test_bundle2_parts():
    out = io.BytesIO()
    ub.write_bundle(out, ub.PushFormat(True, '02'), io.BytesIO(b'cg data'),
                    [A, B], 3)
    parts = bundle2.read_bundle(io.BytesIO(out.getvalue()).read)
    assert [(p.type, p.mandatory) for p in parts] == [
        ('replycaps', True), ('check:heads', True), ('changegroup', True)]
    caps = decode_bundle2_caps(parts[0].data)
    assert 'HG20' in caps and 'pushraced' in caps['error']
    assert parts[1].data == unhexlify(A) + unhexlify(B)
    assert parts[2].params == {'version': '02', 'nbchanges': '3'}
    assert parts[2].data == b'cg data'


def test_bundle2_empty_server_heads_is_null():
    out = io.BytesIO()
    ub.write_bundle(out, ub.PushFormat(True, '01'), io.BytesIO(b''), [], 0)
    parts = bundle2.read_bundle(io.BytesIO(out.getvalue()).read)
    assert parts[1].data == b'\0' * 20


def test_bundle2_results():
    output = Part('output', {}, False, b'hook output\n')
    success = Part('reply:changegroup', {'return': '1'}, False, b'')
    result = ub.bundle2_result([output, success])
    assert result.ok and result.output == b'hook output\n'
    refused = Part('reply:changegroup', {'return': '0'}, False, b'')
    assert ub.bundle2_result([refused])[:2] == (False, None)
    assert not ub.bundle2_result([output]).ok
    abort = Part('error:abort', {'message': 'no way', 'hint': 'ask'}, True,
                 b'')
    result = ub.bundle2_result([output, abort])
    assert (result.ok, result.message, result.hint, result.raced) == (
        False, 'no way', 'ask', False)
    assert result.output == b'hook output\n'
    raced = Part('error:pushraced', {'message': 'changed'}, True, b'')
    assert ub.bundle2_result([raced]).raced
    unsupported = Part('error:unsupportedcontent', {'parttype': 'x'}, True,
                       b'')
    assert "'x'" in ub.bundle2_result([unsupported]).message
    assert not ub.bundle2_result([Part('error:pushkey', {}, True, b'')]).ok


def test_bundle1_results():
    assert ub.bundle1_result(b'1', b'added\n').ok
    assert ub.bundle1_result(b'-2\n', b'').ok
    result = ub.bundle1_result(b'0', b'hook says no\nabort: refused\n')
    assert not result.ok and result.message == 'abort: refused'
    assert not result.raced
    result = ub.bundle1_result(
        b'0', b'repository changed while preparing changes - please try '
              b'again\n')
    assert result.raced
    assert ub.bundle1_result(b'0', b'').message is None
    for code in (b'<html>', b'--1', b'1' * 5000, b'\xb2'):
        with pytest.raises(Abort, match='unexpected answer'):
            ub.bundle1_result(code, b'')


def test_decode_pushkey():
    assert ub.decode_pushkey(b'1\n') == (True, b'')
    assert ub.decode_pushkey(b'0\nhook output\n') == (False,
                                                      b'hook output\n')
    with pytest.raises(Abort):
        ub.decode_pushkey(b'')
