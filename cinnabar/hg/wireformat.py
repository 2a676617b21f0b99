"""Encoding of Mercurial wire protocol v1 arguments and answers.

Pure functions, shared by every transport. The format, in short:

Capabilities
    The `hello` (`capabilities: <caps>`) or `capabilities` answer is a
    space-separated list of words, each `name` or `name=value`. The value
    of `bundle2` is itself URL-quoted: LF-separated `key` or
    `key=value1,value2` items, each part URL-quoted again.

Arguments
    Each command has a fixed list of argument names (`ARGUMENT_SPECS`);
    `*` stands for "any other named argument". Lists of node ids are sent
    space-separated in hex; `bundlecaps` is comma-separated.

batch
    `cmds` is `;`-separated `<command> <args>` items, `<args>` being
    `,`-separated `name=value`; names and values escape `:` `,` `;` `=`
    as `:c` `:o` `:s` `:e`. The answer is the `;`-separated answers,
    escaped the same way.

Answers
    `heads`: space-separated hex ids and LF. `known`: one `0` or `1` per
    node asked. `branchmap`: LF-separated lines `<url-quoted branch>
    <hex id> <hex id>...`. `listkeys`: LF-separated `key<TAB>value`
    lines. `lookup`: `1 <hex id>` or `0 <error message>`.
"""


from cinnabar.errors import Abort
from cinnabar.hg.percent import quote, unquote_to_bytes
from cinnabar.ids import HgId, NULL_HG

ARGUMENT_SPECS = {
    'batch': ('cmds', '*'),
    'between': ('pairs',),
    'branchmap': (),
    'branchmaptns': (),    # hg-evolve's topic extension
    'capabilities': (),
    'cinnabarclone': (),   # our server extension, hg/cinnabarclone.py
    'clonebundles': (),
    'clonebundles_manifest': ('*',),
    'getbundle': ('*',),
    'heads': (),
    '_exttopics_heads': (),  # hg-evolve's topic extension
    'hello': (),
    'known': ('nodes', '*'),
    'listkeys': ('namespace',),
    'lookup': ('key',),
    'pushkey': ('namespace', 'key', 'old', 'new'),
    'stream_out': (),
    'unbundle': ('heads',),
}

# What we tell a bundle2 server we can read, in getbundle's bundlecaps.
OUR_BUNDLE2_CAPS = (('HG20', ()), ('changegroup', ('01', '02')))

_BATCH_ESCAPES = ((':', ':c'), (',', ':o'), (';', ':s'), ('=', ':e'))

# A count or a size written in decimal (stream parameters and headers,
# answer lengths, HTTP header sizes): ASCII digits only (`str.isdigit`
# also takes '²' and other scripts' digits, which `int` then refuses or
# reads), at most MAX_DIGITS of them (past 4300, `int` refuses).
MAX_DIGITS = 20


def parse_decimal(text):
    """The integer the str or bytes `text` writes in ASCII decimal digits
    (1 to MAX_DIGITS of them, nothing else), or None."""
    if isinstance(text, bytes):
        text = text.decode('latin-1')
    if (not 0 < len(text) <= MAX_DIGITS or not text.isascii()
            or not text.isdigit()):
        return None
    return int(text)


def to_bytes(value):
    if isinstance(value, str):
        return value.encode('utf-8', 'surrogateescape')
    return bytes(value)


def to_text(value):
    return value.decode('utf-8', 'surrogateescape')


# Capabilities.

def parse_capabilities(text):
    """Map capability names (str) to values (bytes; b'' when bare)."""
    capabilities = {}
    for word in text.split():
        name, _, value = word.partition(b'=')
        capabilities[to_text(name)] = value
    return capabilities


def decode_bundle2_caps(value):
    """Decode a `bundle2` capability value into {key: [values]}."""
    caps = {}
    for line in unquote_to_bytes(value).split(b'\n'):
        if not line:
            continue
        key, has_values, values = line.partition(b'=')
        caps[to_text(unquote_to_bytes(key))] = [
            to_text(unquote_to_bytes(v))
            for v in values.split(b',')] if has_values else []
    return caps


def encode_bundle2_caps(caps):
    """Encode ((key, (values...)), ...) as a bundle2 capability blob."""
    lines = []
    for key, values in caps:
        line = quote(key, safe='')
        if values:
            line += '=' + ','.join(quote(v, safe='') for v in values)
        lines.append(line)
    return '\n'.join(lines)


def manifests_problem(capabilities):
    """What makes the repository of a server with `capabilities` ({name:
    value}) one whose manifests we cannot read, or None: tree manifests,
    which travel only in changegroup version 03. Only `streamreqs` (the
    store requirements, advertised when the server allows stream clones)
    names them: the bundle2 `changegroup` capability lists 01 and 02
    anyway (helper/bundle.c says the abort a getbundle then gets)."""
    streamreqs = to_text(capabilities.get('streamreqs') or b'').split(',')
    return 'has tree manifests' if 'treemanifest' in streamreqs else None


def getbundle_bundlecaps(caps=OUR_BUNDLE2_CAPS):
    """The bundlecaps argument asking a bundle2 server for a bundle2."""
    return 'HG20,bundle2=' + quote(encode_bundle2_caps(caps), safe='')


# Arguments.

def encode_nodes(nodes):
    return ' '.join(HgId(n) for n in nodes)


def escape_batch(text):
    for plain, escaped in _BATCH_ESCAPES:
        text = text.replace(plain, escaped)
    return text


def unescape_batch(text):
    for plain, escaped in reversed(_BATCH_ESCAPES):
        text = text.replace(escaped, plain)
    return text


def encode_batch(calls):
    """The `cmds` argument for [(command, {name: value}), ...]."""
    items = []
    for command, args in calls:
        encoded = ','.join('%s=%s' % (escape_batch(name),
                                      escape_batch(to_text(to_bytes(value))))
                           for name, value in sorted(args.items()))
        items.append('%s %s' % (command, encoded))
    return ';'.join(items)


def decode_batch(data, count):
    """Split a batch answer into `count` answers (bytes)."""
    parts = data.split(b';')
    if len(parts) != count:
        raise Abort('the server answered %d results to a batch of %d '
                    'commands' % (len(parts), count))
    return [to_bytes(unescape_batch(to_text(p))) for p in parts]


# Answers.

def _hg_id(text, what):
    try:
        return HgId(text)
    except ValueError:
        raise Abort('unexpected answer from the server to "%s": %r is not '
                    'a Mercurial id' % (what, text[:50]))


def decode_nodes(data, what='heads'):
    """Decode a space-separated list of ids; the null id is dropped."""
    return [_hg_id(n, what) for n in data.split() if n != NULL_HG.encode()]


def decode_known(data, count):
    data = data.strip()
    if len(data) != count or data.strip(b'01'):
        raise Abort('unexpected answer to "known": %r' % data[:80])
    return [c == ord('1') for c in data]


def decode_branchmap(data):
    """[(branch, [HgId...]), ...] in the server's order."""
    branches = []
    for line in data.split(b'\n'):
        if not line:
            continue
        name, *heads = line.split(b' ')
        branches.append((to_text(unquote_to_bytes(name)),
                         [_hg_id(h, 'branchmap') for h in heads if h]))
    return branches


def split_topics(branchmap, style):
    """(branches, topics) from the branchmap of a server with hg-evolve's
    topic extension: [(branch, heads)] and [((branch, topic), heads)].

    Its names, `style` `fqbn` (`branchmaptns`): `<branch>` for a branch
    (`<branch>//` when the name holds `//`), `<branch>//<topic>` for a
    topic, `<branch>//<namespace>/<topic>` for a topic of a namespace
    other than `none`. `colon` (`branchmap` of a non-publishing server):
    `<branch>` or `<branch>:<topic>` (no namespace). Topic names hold no
    `/` or `:` (`[-_.\\w]+`). Topics of a namespace are left out: git
    would see them as topics of another name.
    """
    branches, topics = [], []
    for name, heads in branchmap:
        if style == 'fqbn':
            branch, sep, topic = name.rpartition('//')
            if not sep:
                branch, topic = topic, ''
        else:
            branch, _, topic = name.partition(':')
        if not topic:
            branches.append((branch, heads))
        elif '/' not in topic:
            topics.append(((branch or 'default', topic), heads))
    return branches, topics


def decode_listkeys(data):
    """{key: value} (str) from a listkeys answer, in the server's order."""
    keys = {}
    for line in data.split(b'\n'):
        if not line:
            continue
        key, tab, value = line.partition(b'\t')
        if not tab:
            raise Abort('unexpected line in a listkeys answer: %r' % line)
        keys[to_text(key)] = to_text(value)
    return keys


def decode_bookmarks(data):
    """{bookmark: HgId} from a `listkeys bookmarks` answer."""
    return {name: _hg_id(value, 'listkeys')
            for name, value in decode_listkeys(data).items()}


def decode_lookup(data, key):
    status, _, rest = data.rstrip(b'\n').partition(b' ')
    if status == b'1':
        return _hg_id(rest, 'lookup')
    raise Abort('the server cannot resolve %r: %s' % (key, to_text(rest)))
