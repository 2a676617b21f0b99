"""A release key made for the test session, signing release files the way
tools/sign-release does (Ed25519, hex, `<file>.sig`). Commands trust it
through GIT_CINNABAR_RELEASE_KEY (see cinnabar/release.py)."""

import os
import sys

from .env import ROOT

sys.path.insert(0, str(ROOT))
from cinnabar import ed25519  # noqa: E402


class ReleaseKey:
    def __init__(self, seed=None):
        self.seed = seed or os.urandom(ed25519.KEY_SIZE)
        self.public = ed25519.public_key(self.seed).hex()

    def env(self):
        return {'GIT_CINNABAR_RELEASE_KEY': self.public}

    def sign(self, path):
        """Write `<path>.sig`, the signature of the file at `path`."""
        path = str(path)
        with open(path, 'rb') as f:
            signature = ed25519.sign(self.seed, f.read())
        with open(path + '.sig', 'w') as f:
            f.write(signature.hex() + '\n')
