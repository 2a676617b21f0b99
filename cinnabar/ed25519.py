"""Ed25519 signatures (RFC 8032), in pure Python, for release checks.

Used to check that a release file (a release manifest, a helper's
checksum) was signed with the project's release key (`cinnabar.release`);
signing is here too, for `tools/sign-release` and the tests. Slow (a few
milliseconds a signature) and not constant-time: verification handles
only public data, and signing is meant for a release manager's machine.

Summary of the scheme (RFC 8032, section 5.1), on the twisted Edwards
curve -x^2 + y^2 = 1 + d x^2 y^2 over GF(p), p = 2^255 - 19, with base
point B of prime order L:

- a point is encoded as 32 bytes: y little-endian, the top bit being the
  low bit of x;
- a private key is 32 random bytes (the seed); SHA-512 of it gives the
  secret scalar `a` (first half, "clamped") and a prefix (second half);
  the public key is the encoding of [a]B;
- the signature of M is R || S (64 bytes): r = SHA-512(prefix || M) mod L,
  R = enc([r]B), k = SHA-512(R || A || M) mod L, S = (r + k a) mod L,
  S little-endian;
- it verifies when S < L, A and R decode to curve points, and
  [S]B = R + [k]A.

As libsodium does, points of small order (those P with [8]P the
identity: the identity itself and seven others) are refused as A and as
R: with A = R = identity and S = 0, the equation holds for any message,
so such a "public key" would make any text look signed. Encodings with
y >= p are refused (not canonical).
"""

import hashlib

P = 2 ** 255 - 19
L = 2 ** 252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_MINUS_ONE = pow(2, (P - 1) // 4, P)
KEY_SIZE = 32
SIGNATURE_SIZE = 64


def _inverse(x):
    return pow(x, P - 2, P)


def _recover_x(y, sign):
    """The x of the curve point with that y and low bit of x, or None."""
    if y >= P:
        return None
    square = (y * y - 1) * _inverse(D * y * y + 1) % P
    if square == 0:
        return None if sign else 0
    x = pow(square, (P + 3) // 8, P)
    if (x * x - square) % P:
        x = x * SQRT_MINUS_ONE % P
    if (x * x - square) % P:
        return None
    if x & 1 != sign:
        x = P - x
    return x


# Points are in extended coordinates (X, Y, Z, T): x = X/Z, y = Y/Z,
# x y = T/Z.
_BY = 4 * _inverse(5) % P
_BX = _recover_x(_BY, 0)
BASE = (_BX, _BY, 1, _BX * _BY % P)
IDENTITY = (0, 1, 1, 0)


def _add(p, q):
    """p + q (the unified addition of RFC 8032, 5.1.4; doubles too)."""
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * t1 * t2 * D % P
    d = 2 * z1 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _multiply(scalar, point):
    result = IDENTITY
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def _same(p, q):
    return ((p[0] * q[2] - q[0] * p[2]) % P == 0
            and (p[1] * q[2] - q[1] * p[2]) % P == 0)


def _small_order(point):
    """Whether [8]point is the identity."""
    for _ in range(3):
        point = _add(point, point)
    return _same(point, IDENTITY)


def _encode(point):
    z = _inverse(point[2])
    x, y = point[0] * z % P, point[1] * z % P
    return (y | (x & 1) << 255).to_bytes(32, 'little')


def _decode(data):
    """The point encoded in 32 bytes, or None."""
    if len(data) != 32:
        return None
    y = int.from_bytes(data, 'little')
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % P)


def _hash_scalar(*parts):
    return int.from_bytes(hashlib.sha512(b''.join(parts)).digest(),
                          'little') % L


def _secret(seed):
    if len(seed) != KEY_SIZE:
        raise ValueError('an Ed25519 private key is 32 bytes')
    digest = hashlib.sha512(seed).digest()
    scalar = int.from_bytes(digest[:32], 'little')
    scalar = (scalar & ((1 << 254) - 8)) | (1 << 254)
    return scalar, digest[32:]


def public_key(seed):
    """The 32-byte public key of the 32-byte private key `seed`."""
    scalar, _ = _secret(seed)
    return _encode(_multiply(scalar, BASE))


def sign(seed, message):
    """The 64-byte signature of `message` (bytes) with `seed`."""
    scalar, prefix = _secret(seed)
    public = _encode(_multiply(scalar, BASE))
    r = _hash_scalar(prefix, message)
    encoded_r = _encode(_multiply(r, BASE))
    s = (r + _hash_scalar(encoded_r, public, message) * scalar) % L
    return encoded_r + s.to_bytes(32, 'little')


def verify(public, message, signature):
    """Whether `signature` is a valid signature of `message` by the
    holder of `public` (32 bytes)."""
    if len(public) != KEY_SIZE or len(signature) != SIGNATURE_SIZE:
        return False
    a = _decode(public)
    r = _decode(signature[:32])
    s = int.from_bytes(signature[32:], 'little')
    if a is None or r is None or s >= L:
        return False
    if _small_order(a) or _small_order(r):
        return False
    k = _hash_scalar(signature[:32], public, message)
    return _same(_multiply(s, BASE), _add(r, _multiply(k, a)))
