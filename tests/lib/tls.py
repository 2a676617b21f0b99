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
