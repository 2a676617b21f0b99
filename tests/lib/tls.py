"""A self-signed TLS certificate for servers on 127.0.0.1, made with the
openssl command line. Clients trust it through GIT_SSL_CAINFO (for
git cinnabar download and self-update: see cinnabar/release.py)."""

import subprocess
from pathlib import Path


def make_certificate(directory):
    """(certificate, private key) paths of a new self-signed certificate
    for the IP address 127.0.0.1, written in `directory`."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    cert, key = directory / 'cert.pem', directory / 'key.pem'
    subprocess.run(
        ['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
         'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
         '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
         '-keyout', str(key), '-out', str(cert)],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return cert, key


def _openssl(*args):
    subprocess.run(['openssl', *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_authority_and_certificate(directory):
    """(authority certificate, server certificate, server key) paths: a
    test certificate authority, and a certificate for the IP address
    127.0.0.1 it signed, written in `directory`. Clients trust the
    authority (http.sslCAInfo), not the server's certificate itself."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    ca, ca_key = directory / 'ca.pem', directory / 'ca-key.pem'
    cert, key = directory / 'server.pem', directory / 'server-key.pem'
    request = directory / 'server.csr'
    curve = ('-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1')
    _openssl('req', '-x509', *curve, '-nodes', '-days', '2',
             '-subj', '/CN=cinnabar test authority',
             '-addext', 'basicConstraints=critical,CA:TRUE',
             '-addext', 'keyUsage=critical,keyCertSign',
             '-keyout', ca_key, '-out', ca)
    _openssl('req', '-new', *curve, '-nodes', '-subj', '/CN=127.0.0.1',
             '-keyout', key, '-out', request)
    extensions = directory / 'server.ext'
    extensions.write_text('subjectAltName=IP:127.0.0.1\n'
                          'extendedKeyUsage=serverAuth\n')
    _openssl('x509', '-req', '-in', request, '-CA', ca, '-CAkey', ca_key,
             '-CAcreateserial', '-days', '2', '-extfile', extensions,
             '-out', cert)
    return ca, cert, key
