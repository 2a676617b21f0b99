"""Structure-aware generator: random bundles whose hg ids are all valid.

A bundle whose ids do not verify is refused when its first changeset is
read, so mutated inputs rarely reach the manifest, file and commit code.
This generator makes a random history (changesets, manifests, file
revisions, with merges and named branches), writes each revision's text
the way Mercurial does (see below), computes its id from that text, so
every id verifies, and sends the texts as deltas in a changegroup inside
a bundle.  Then it makes the history odd in ways that keep the ids
valid: hostile or colliding paths, very deep or long paths, malformed
manifests, odd users, dates and extras, copy metadata pointing nowhere,
revisions out of order, unknown parents, odd but correct deltas, and a
few incorrect ones.

Texts (Mercurial's formats):
  file       the content, preceded by "\\1\\n" + "key: value\\n"... +
             "\\1\\n" when it has metadata (copy, copyrev) or starts with
             "\\1\\n"
  manifest   one line per file, sorted by path: path "\\0" 40-hex node
             flags ("", "x" executable, "l" symlink) "\\n"
  changeset  manifest hex "\\n" user "\\n" "<time> <tz>[ <extras>]" "\\n"
             changed files, one per line "\\n" "\\n" description; extras
             are key:value pairs with \\\\, \\n, \\r, \\0 escaped, joined
             by "\\0"

`Generated.clean` says whether the bundle is one Mercurial itself makes
and git-cinnabar must import as it is; the fuzzer reports a clean bundle
that is refused.
"""

import struct

from lib import bundlefmt
from lib.bundlefmt import Changegroup, Rev, encode_delta, make_delta
from hgcheck import NULL, hg_id

WORDS = ('a', 'b', 'c', 'src', 'doc', 'lib', 'main.c', 'README', 'x.txt',
         'Makefile', 'util', 'test', 'data.bin', 'deep')


class Generated:
    def __init__(self, data, clean, traits):
        self.data = data
        self.clean = clean
        self.traits = traits  # which odd things were put in


class Generator:
    def __init__(self, rng, compress_zstd=None):
        self.rng = rng
        self.compress_zstd = compress_zstd

    def odd(self, trait, p):
        """Whether to put in the odd thing `trait` (probability p)."""
        if self.clean_only or self.rng.random() >= p:
            return False
        self.traits.add(trait)
        return True

    def generate(self, clean=None):
        rng = self.rng
        self.clean_only = rng.random() < 0.3 if clean is None else clean
        self.traits = set()
        self.file_revs = {}   # path -> [Rev]
        self.manifest_revs = []
        self.changeset_revs = []
        self.texts = {NULL: b''}
        self.manifest_node_of = {}
        self.pending = []
        self.paths = self.path_pool()
        history = self.history()
        version = 2 if rng.random() < 0.7 else 1
        if self.odd('cg03', 0.03):
            version = 3
        cg = self.changegroup(history, version)
        data = self.wrap(cg)
        return Generated(data, not self.traits, sorted(self.traits))

    # Paths.

    def path_pool(self):
        rng = self.rng
        pool = set()
        for _ in range(rng.randrange(1, 8)):
            depth = rng.choice((1, 1, 2, 3))
            pool.add('/'.join(rng.choice(WORDS) for _ in range(depth))
                     .encode())
        pool = {p for p in pool
                if not any(q.startswith(p + b'/') for q in pool)}
        if self.odd('hostile-path', 0.15):
            pool.add(rng.choice((
                b'.hg/hgrc', b'a/.hg/x', b'.git/config', b'a/.git/hooks/x',
                b'../up', b'a/../../up', b'/abs', b'a//b', b'dir/', b'.',
                b'a/./b', b'a/../a', b'.GIT/x', b'.hg', b'.git',
                b'a\rb', b'\xff\xfe', b'~1/x', b'.hgsub', b'.hgsubstate',
                b'.hgtags', b'.gitmodules', b'tab\tname', b' space ')))
        if self.odd('newline-path', 0.03):
            pool.add(b'evil\nname')
        if self.odd('case-collision', 0.08):
            pool.update((b'README', b'readme'))
        if self.odd('file-and-dir', 0.08):
            pool.update((b'x', b'x/y'))
        if self.odd('deep-path', 0.03):
            pool.add(b'd/' * rng.choice((300, 4100, 5000, 100000)) + b'f')
        if self.odd('long-name', 0.05):
            pool.add(b'n' * rng.choice((256, 4096, 70000)))
        if self.odd('empty-path', 0.02):
            pool.add(b'')
        return sorted(pool)

    # History.

    def history(self):
        """[(node, p1, p2, manifest node)] in the order they are sent."""
        rng = self.rng
        changesets = []
        manifests = {NULL: {}}   # changeset -> {path: (node, flags)}
        for i in range(rng.randrange(1, 8)):
            p1 = changesets[-1][0] if changesets and rng.random() < 0.8 \
                else (rng.choice(changesets)[0] if changesets else NULL)
            p2 = NULL
            if len(changesets) > 1 and rng.random() < 0.2:
                p2 = rng.choice(changesets)[0]
                if p2 == p1:
                    p2 = NULL
            if self.odd('unknown-parent', 0.02):
                p1 = bytes(rng.randrange(256) for _ in range(20))
            if self.odd('p2-without-p1', 0.02) and p1 != NULL:
                p1, p2 = NULL, p1
            base = dict(manifests.get(p1, {}))
            other = manifests.get(p2, {})
            for path, entry in other.items():
                base.setdefault(path, entry)
            changed = self.change_files(base, manifests.get(p1, {}), other)
            mnode = self.add_manifest(base, p1, p2, manifests)
            node = self.add_changeset(mnode, p1, p2, sorted(changed), i)
            for rev in self.pending:
                rev.cs = node    # the changeset that brought the revision
            self.pending = []
            manifests[node] = base
            changesets.append((node, p1, p2, mnode))
        return changesets

    def change_files(self, manifest, m1, m2):
        rng = self.rng
        changed = set()
        count = min(len(self.paths), rng.randrange(0, 4))
        for path in rng.sample(self.paths, count):
            changed.add(path)
            if path in manifest and rng.random() < 0.15:
                del manifest[path]
                continue
            flags = rng.choice((b'', b'', b'', b'x', b'l'))
            if self.odd('odd-flag', 0.03):
                flags = rng.choice((b't', b'z', b'xl', b'X', b'\0'))
            fp1 = m1.get(path, (NULL,))[0]
            fp2 = m2.get(path, (NULL,))[0]
            if fp2 == fp1:
                fp2 = NULL
            text = self.file_text(path, flags, manifest)
            node = hg_id(fp1, fp2, text)
            self.add_rev(self.file_revs.setdefault(path, []), node, fp1,
                         fp2, text)
            manifest[path] = (node, flags)
        return changed

    def file_text(self, path, flags, manifest):
        rng = self.rng
        if flags == b'l':
            content = rng.choice((b'target', b'../x', b'a/b/c'))
            if self.odd('odd-symlink', 0.1):
                content = rng.choice((b'', b'/etc/passwd', b'../' * 50,
                                      b'x\0y', b'.git/config', b'a\nb'))
        else:
            content = rng.choice((
                b'', b'line\n', b'one\ntwo\nthree\n' * rng.randrange(1, 4),
                bytes(rng.randrange(256) for _ in range(rng.randrange(64))),
                b'\x01\nfake metadata\x01\ncontent\n'))
        if self.odd('big-file', 0.01):
            content = b'z' * rng.choice((1 << 20, 5 << 20))
        meta = b''
        if manifest and rng.random() < 0.15:
            source = rng.choice(sorted(manifest))
            meta = b'copy: %s\ncopyrev: %s\n' % (
                source, manifest[source][0].hex().encode())
        if self.odd('odd-copy', 0.05):
            meta = rng.choice((
                b'copy: nowhere\ncopyrev: %s\n' % (b'1' * 40),
                b'copy: x\ncopyrev: zz\n', b'copy: x\n', b'garbage\n',
                b'copyrev: %s\n' % (b'0' * 40), b'copy: \ncopyrev: \n'))
        if meta or content.startswith(b'\x01\n'):
            if self.odd('unterminated-meta', 0.03):
                return b'\x01\n' + meta + content
            return b'\x01\n' + meta + b'\x01\n' + content
        return content

    def manifest_text(self, manifest):
        rng = self.rng
        lines = [b'%s\0%s%s\n' % (path, node.hex().encode(), flags)
                 for path, (node, flags) in sorted(manifest.items())]
        if lines and self.odd('manifest-duplicate', 0.04):
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
        if len(lines) > 1 and self.odd('manifest-unsorted', 0.04):
            lines.reverse()
        if lines and self.odd('manifest-garbage', 0.04):
            i = rng.randrange(len(lines))
            lines[i] = rng.choice((
                lines[i].replace(b'\0', b''), lines[i][:-2] + b'\n',
                lines[i].replace(b'\n', b''), b'\n', b'x\0' + b'g' * 40 +
                b'\n', b'x\0' + b'a' * 41 + b'\n', b'\0' * 42 + b'\n'))
        return b''.join(lines)

    def add_manifest(self, manifest, p1, p2, manifests):
        if not manifest and self.rng.random() < 0.5:
            return NULL
        m1 = self.manifest_node_of.get(p1, NULL)
        m2 = self.manifest_node_of.get(p2, NULL)
        text = self.manifest_text(manifest)
        node = hg_id(m1, m2, text)
        self.add_rev(self.manifest_revs, node, m1, m2, text)
        return node

    def add_changeset(self, mnode, p1, p2, files, i):
        rng = self.rng
        user = rng.choice((b'Jane Doe <jane@example.com>', b'bob',
                           b'J\xc3\xa9r\xc3\xb4me <j@h>'))
        if self.odd('odd-user', 0.08):
            user = rng.choice((b'', b'<>', b'a\0b <x>', b'x' * 5000,
                               b'a <b> <c>', b'\xff\xfe', b'<only@mail>',
                               b'name <unterminated', b'a\rb'))
        date = b'%d %d' % (1000000000 + i * 60, rng.choice((0, -3600, 19800)))
        if self.odd('odd-date', 0.08):
            date = rng.choice((
                b'-1 0', b'99999999999999999999 0', b'1.5 0', b'0 99999999',
                b'0 -99999999', b'abc def', b'0', b'', b'0 0 0',
                b'1e10 0', b'0x10 0', b'18446744073709551616 0',
                b'0 1.5', b' 0 0'))
        extras = []
        if rng.random() < 0.3:
            extras.append(b'branch:' + rng.choice((b'feature', b'stable')))
        if self.odd('odd-extra', 0.08):
            extras.append(rng.choice((
                b'branch:', b'branch:a:b', b'branch:with space',
                b'branch:new\\nline', b'close:1', b'committer:x\\ny',
                b'committer:Joe <j> 0 0', b'nocolon', b'bad\\escape:\\q',
                b'branch:' + b'b' * 300, b'convert_revision:abc',
                b'branch:..', b'branch:HEAD', b'branch:a~b^c')))
        if extras:
            date += b' ' + b'\0'.join(extras)
        listed = list(files)
        if self.odd('odd-files-list', 0.05):
            listed = rng.choice((listed[::-1], listed + [b''],
                                 listed + [b'not/in/manifest']))
        message = rng.choice((b'message', b'', b'multi\nline\n\nbody',
                              b'\xe9t\xe9 latin-1'))
        if self.odd('odd-message', 0.03):
            message = rng.choice((b'nul\0byte', b'x' * 100000, b'\n\n\n'))
        manifest_hex = mnode.hex().encode()
        if self.odd('unknown-manifest', 0.02):
            manifest_hex = b'2' * 40
        text = b'\n'.join([manifest_hex, user, date] + listed +
                          [b'', message])
        node = hg_id(p1, p2, text)
        self.add_rev(self.changeset_revs, node, p1, p2, text)
        self.manifest_node_of[node] = mnode
        return node

    def add_rev(self, revs, node, p1, p2, text):
        if any(r.node == node for r in revs):
            return  # the same revision again: Mercurial sends it once
        self.texts[node] = text
        revs.append(Rev(node, p1, p2, NULL, NULL, b''))
        self.pending.append(revs[-1])

    # The changegroup.

    def changegroup(self, history, version):
        rng = self.rng
        groups = [self.changeset_revs, self.manifest_revs]
        groups += list(self.file_revs.values())
        for revs in groups:
            if len(revs) > 1 and self.odd('out-of-order', 0.04):
                rng.shuffle(revs)
            if revs and self.odd('duplicate-revision', 0.03):
                revs.append(revs[0])
            self.set_deltas(revs, version, revs is self.changeset_revs)
        files = sorted((p, r) for p, r in self.file_revs.items() if r)
        if self.odd('empty-file-group', 0.03):
            files.append((b'nothing', []))
        if len(files) > 1 and self.odd('files-unsorted', 0.04):
            files.reverse()
        return Changegroup(version, self.changeset_revs, self.manifest_revs,
                           files)

    def set_deltas(self, revs, version, changesets=False):
        """Delta bases as Mercurial picks them: the previous revision (01),
        or (02, 03) the stored delta parent (p1 or null) or the previous
        one; for changesets, which it stores without delta chains, the
        previous one or null."""
        rng = self.rng
        prev = None
        for rev in revs:
            if version == 1:
                rev.base = prev if prev is not None else rev.p1
            else:
                choices = [NULL] + ([prev] if prev else [])
                if not changesets or self.odd('changeset-delta-p1', 0.1):
                    choices.append(rev.p1)
                rev.base = rng.choice(choices)
                if self.odd('unknown-delta-base', 0.01):
                    rev.base = b'\x33' * 20
            base_text = self.texts.get(rev.base, b'')
            rev.delta = self.delta(base_text, self.texts[rev.node])
            prev = rev.node

    def delta(self, base, text):
        rng = self.rng
        if rng.random() < 0.25:
            delta = encode_delta([(0, len(base), text)])
        elif len(text) > 2 and base and self.odd('multi-hunk-delta', 0.2):
            # Correct, but in several hunks (some empty).  Mercurial never
            # sends these, and its revlog reads them back wrong; against
            # an empty base it even takes what follows the first hunk
            # header as the whole text.
            cut = rng.randrange(1, len(text))
            delta = encode_delta([(0, 0, text[:cut]), (0, 0, b''),
                                  (0, len(base), text[cut:])])
        else:
            delta = make_delta(base, text, not self.odd('byte-delta', 0.1))
        if self.odd('bad-delta', 0.02):
            delta = rng.choice((
                encode_delta([(len(base) + 1, len(base) + 1, b'x')]),
                encode_delta([(1, 0, b'')]),
                encode_delta([(0, 0, b'a'), (0, 0, b'b')])[:-1],
                struct.pack('>III', 0, len(base), 0xffffffff) + text,
                struct.pack('>III', 0xfffffff0, 0xffffffff, 1) + b'x',
                delta + encode_delta([(0, 0, b'back')])))
        return delta

    def wrap(self, cg):
        rng = self.rng
        kind = rng.choice(('bundle1', 'bundle2', 'bundle2', 'cg'))
        if cg.version != 1:
            kind = 'bundle2'
        compression = rng.choice((b'UN', b'UN', b'GZ', b'BZ') +
                                 ((b'ZS',) if kind == 'bundle2' and
                                  self.compress_zstd else ()))
        if kind == 'cg':
            compression = b'UN'
        extra = []
        if kind == 'bundle2' and rng.random() < 0.3:
            extra.append(bundlefmt.Part(b'output', payload=b'hello\n'))
        bundle = bundlefmt.changegroup_bundle(cg, kind, compression, extra)
        return bundle.encode(self.compress_zstd)
