"""The shared corpus: Mercurial bundles and the ids they must convert to.

Layout (see the corpus README): `nginx.hg`, `hgtests/*` listed in
`hgtests/MANIFEST.tsv`, and `expected/<bundle>.tsv` with lines
`<hg changeset id> <git commit id>` as produced by the reference
implementation.  Changesets the reference did not import are absent from
the expected file and are not required.
"""

import csv
from pathlib import Path

NGINX = 'nginx.hg'


class Corpus:
    def __init__(self, root):
        self.root = Path(root)

    def manifest(self):
        """Rows of hgtests/MANIFEST.tsv, as dicts keyed by its header."""
        with open(self.root / 'hgtests' / 'MANIFEST.tsv', newline='') as f:
            return list(csv.DictReader(f, delimiter='\t'))

    def hgtests_bundles(self):
        """Names of the bundles under hgtests/, from MANIFEST.tsv."""
        return [row['file'] for row in self.manifest()]

    def bundle(self, name):
        """Absolute path of the bundle `name`."""
        path = self.root / name
        if not path.exists():
            path = self.root / 'hgtests' / name
        if not path.is_file():
            raise FileNotFoundError(f"no bundle '{name}' in {self.root}")
        return path

    def expected(self, name):
        """{hg changeset id: git commit id} for the bundle `name`."""
        mapping = {}
        with open(self.root / 'expected' / f'{name}.tsv') as f:
            for line in f:
                hg_id, git_id = line.split()
                mapping[hg_id] = git_id
        return mapping
