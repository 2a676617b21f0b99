"""A release key made for the test session, signing release files the way
tools/sign-release does (`<file>.sig`: `<public hex> <signature hex>`
lines). Commands trust it through GIT_CINNABAR_RELEASE_KEY (see
cinnabar/release.py)."""

import os
import sys

from .env import ROOT

sys.path.insert(0, str(ROOT))
from cinnabar import ed25519  # noqa: E402
from cinnabar.release import format_signatures  # noqa: E402


class ReleaseKey:
    def __init__(self, seed=None):
        self.seed = seed or os.urandom(ed25519.KEY_SIZE)
        self.public = ed25519.public_key(self.seed).hex()

    def env(self):
        return {'GIT_CINNABAR_RELEASE_KEY': self.public}

    def write_seed(self, path):
        """Write the private key as tools/sign-release new-key does."""
        path.write_text(self.seed.hex() + '\n')
        path.chmod(0o600)
        return path

    def sign(self, path, *others):
        """Write `<path>.sig`, the signature of the file at `path` by this
        key and the ReleaseKeys `others`."""
        path = str(path)
        with open(path, 'rb') as f:
            text = format_signatures(
                [self.seed] + [o.seed for o in others], f.read())
        with open(path + '.sig', 'w') as f:
            f.write(text)
