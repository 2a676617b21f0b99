"""Ed25519 (cinnabar.ed25519) against RFC 8032's test vectors and, when
the openssl command line is there, against OpenSSL both ways."""

import os
import shutil
import subprocess

import pytest

from cinnabar import ed25519

# RFC 8032, section 7.1, tests 1 to 3: (secret, public, message, signature).
VECTORS = [
    ('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
     'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
     '',
     'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155'
     '5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'),
    ('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
     '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
     '72',
     '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da'
     '085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00'),
    ('c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
     'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
     'af82',
     '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac'
     '18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a'),
]


@pytest.mark.parametrize('secret,public,message,signature', VECTORS)
def test_rfc8032_vectors(secret, public, message, signature):
    seed, message = bytes.fromhex(secret), bytes.fromhex(message)
    assert ed25519.public_key(seed).hex() == public
    assert ed25519.sign(seed, message).hex() == signature
    assert ed25519.verify(bytes.fromhex(public), message,
                          bytes.fromhex(signature))


def test_forgeries_fail():
    seed = os.urandom(32)
    public = ed25519.public_key(seed)
    signature = ed25519.sign(seed, b'release')
    assert ed25519.verify(public, b'release', signature)
    assert not ed25519.verify(public, b'releasf', signature)
    for position in (0, 31, 32, 63):
        damaged = bytearray(signature)
        damaged[position] ^= 1
        assert not ed25519.verify(public, b'release', bytes(damaged))
    other = ed25519.public_key(os.urandom(32))
    assert not ed25519.verify(other, b'release', signature)
    # S + L: same value mod L, must be refused (malleability).
    s = int.from_bytes(signature[32:], 'little') + ed25519.L
    assert not ed25519.verify(public, b'release',
                              signature[:32] + s.to_bytes(32, 'little'))
    assert not ed25519.verify(public, b'release', signature[:63])
    assert not ed25519.verify(b'\xff' * 32, b'release', signature)


def _der_private(seed):
    # PKCS#8 for Ed25519 (RFC 8410): a fixed prefix and the 32-byte seed.
    return bytes.fromhex('302e020100300506032b657004220420') + seed


@pytest.mark.skipif(not shutil.which('openssl'), reason='no openssl')
def test_agrees_with_openssl(tmp_path):
    seed = os.urandom(32)
    key = tmp_path / 'key.der'
    key.write_bytes(_der_private(seed))
    message = tmp_path / 'message'
    message.write_bytes(b'version 0.2.0\nprotocol 1\n')
    signature = subprocess.run(
        ['openssl', 'pkeyutl', '-sign', '-rawin', '-inkey', str(key),
         '-keyform', 'DER', '-in', str(message)],
        check=True, stdout=subprocess.PIPE).stdout
    public_der = subprocess.run(
        ['openssl', 'pkey', '-in', str(key), '-inform', 'DER', '-pubout',
         '-outform', 'DER'], check=True, stdout=subprocess.PIPE).stdout
    public = public_der[-32:]
    assert ed25519.public_key(seed) == public
    assert ed25519.sign(seed, message.read_bytes()) == signature
    assert ed25519.verify(public, message.read_bytes(), signature)


def small_order_encodings():
    """The encodings of points of order 1, 2, 4 and 8: the identity,
    (0, -1), and (x, 0) with both signs of x, found from their y."""
    encodings = []
    for y in (1, ed25519.P - 1, 0):
        for sign in (0, 1):
            x = ed25519._recover_x(y, sign)
            if x is not None:
                encodings.append((y | sign << 255).to_bytes(32, 'little'))
    # Two points of order 8 (the others are their negations).
    encodings += [bytes.fromhex(
        'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'),
        bytes.fromhex(
        '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05')]
    return list(dict.fromkeys(encodings))


def test_small_order_points_are_refused():
    """A = R = identity, S = 0 satisfies [S]B = R + [k]A for any message;
    libsodium refuses small-order A and R, and so do we."""
    identity = (1).to_bytes(32, 'little')
    zero = bytes(32)
    assert not ed25519.verify(identity, b'anything', identity + zero)
    points = small_order_encodings()
    assert len(points) >= 5
    orders = set()
    for encoded in points:
        point = ed25519._decode(encoded)
        assert point is not None and ed25519._small_order(point)
        orders.add(next(n for n in (1, 2, 4, 8) if ed25519._same(
            ed25519._multiply(n, point), ed25519.IDENTITY)))
        for message in (b'', b'release'):
            assert not ed25519.verify(encoded, message, encoded + zero)
    assert orders == {1, 2, 4, 8}
    # A real key with a small-order R: [S]B = R + [k]A cannot be met by
    # a signer anyway, but the R is refused before any arithmetic.
    seed = os.urandom(32)
    public = ed25519.public_key(seed)
    good = ed25519.sign(seed, b'release')
    assert ed25519.verify(public, b'release', good)
    assert not ed25519._small_order(ed25519._decode(public))
    assert not ed25519._small_order(ed25519._decode(good[:32]))
    for encoded in points:
        assert not ed25519.verify(public, b'release', encoded + good[32:])
