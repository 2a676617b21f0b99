"""`make demo`'s script (demo/run.sh, what `make demo` runs once the
helper and the venv are built) with the hg under test: it serves
demo/example.hg, clones it, pushes a commit back, and `hg verify` and
`hg log` show the pushed changeset; it ends with its server stopped and
its work directory gone."""

import re
import socket

from lib import env as test_env
from lib.proc import run

DEMO = test_env.ROOT / 'demo' / 'run.sh'


def test_demo_serves_clones_and_pushes(hg, tmp_path):
    result = run(['bash', DEMO], extra_env={'HG': hg.exe,
                                            'TMPDIR': str(tmp_path)},
                 check=False, timeout=120)
    text = result.out + result.err
    assert result.returncode == 0, result.describe()
    assert 'Traceback' not in text, result.describe()
    assert 'hg verify: ok' in text, result.describe()
    assert re.search(r'^o  [0-9a-f]{12} default Demo User '
                     r'<demo@example.org> A commit made with git$',
                     text, re.M), result.describe()
    assert result.out.rstrip().endswith('== done'), result.describe()
    assert list(tmp_path.iterdir()) == []
    port = int(re.search(r'hg serve at http://127\.0\.0\.1:(\d+)/',
                         text).group(1))
    with socket.socket() as sock:
        assert sock.connect_ex(('127.0.0.1', port)) != 0, \
            'the demo left its server running'
