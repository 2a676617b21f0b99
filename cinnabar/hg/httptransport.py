"""Mercurial over HTTP(S), every request made by the helper (`http`).

Request
    `GET <repo>?cmd=<command>`. Arguments, `application/x-www-form-
    urlencoded` and sorted by name, go in the request body of a POST with
    an `X-HgArgs-Post: <length>` header when the server has the
    `httppostargs` capability; else in headers `X-HgArg-1`, `X-HgArg-2`...
    when it has `httpheader=<size>` (each header line, name and CRLF
    included, at most <size> bytes); else in the query string. When the
    server's `httpmediatype` capability has `0.2tx`, `X-HgProto-1: 0.1 0.2
    comp=<engines>` says which answers we read. Commands that change the
    repository (`unbundle`, `pushkey`) must be POSTs: `unbundle` sends
    the bundle as the body (`Content-Type: application/mercurial-0.1`,
    arguments never in the body), `pushkey` an empty body unless its
    arguments are there. The helper reads such bodies from a file
    (`X-Cinnabar-Body-File`).

Answer
    `application/mercurial-0.1`: the raw value for string commands, a zlib
    stream for stream commands (getbundle). `application/mercurial-0.2`: a
    byte giving the length of a compression engine name, the name (`zstd`,
    `zlib`, `none`...), then the value compressed with it.
    `application/hg-error`: the body is an error message. `unbundle`
    answers a bundle2 (uncompressed) to a bundle2, else `<integer>\\n
    <output>`, like `pushkey`.

A getbundle answer goes straight into the helper (`http import`), which
decodes and imports it as it comes: a bundle2, or a bundle1 server's bare
changegroup (`cg01`); nothing of it is held whole in memory or on disk.
An answer to `capabilities` that starts with `HG10` or `HG20` means the
URL serves a bundle file: it is saved to a temporary file and read as one
(`bundlefile`).

Hostile servers
    An answer read in memory must be whole: one cut short (fewer bytes
    than its Content-Length, a chunked body that stops) is an error, not
    a shorter answer. Its size is bounded (MAX_ANSWER, MAX_CAPABILITIES,
    also after decompression). Redirects are followed for `capabilities`
    only, at most MAX_REDIRECTS, never from https to http; the helper
    gives each request the http.* settings of its own URL and each host
    its own credentials (helper/http-client.c), and URLs are shown
    without user and password.
"""

import io
import os
import sys

from cinnabar import tmpfiles
from cinnabar.errors import Abort
from cinnabar.hg import percent, wireformat
from cinnabar.hg.url import git_repository_error, join_url, split_url
from cinnabar.hg.wire import Peer, Transport
from cinnabar.redact import redact_url
from cinnabar.trace import Tracer

# tempfile is imported where a spool is needed: the small answers of a
# fetch with nothing new need none.

USER_AGENT = 'mercurial/proto-1.0'
MEDIA_TYPE_1 = 'application/mercurial-0.1'
MEDIA_TYPE_2 = 'application/mercurial-0.2'
ERROR_TYPE = 'application/hg-error'
GIT_ADVERTISEMENT = 'application/x-git-upload-pack-advertisement'
REDIRECTS = (301, 302, 303, 307, 308)
# Commands the server only runs for a POST request.
POST_COMMANDS = ('pushkey',)
# The helper's request header naming the file holding the request body.
BODY_FILE_HEADER = 'X-Cinnabar-Body-File'
# Stream commands whose application/mercurial-0.1 answer is not
# compressed (hgweb sends stream_out as it is).
UNCOMPRESSED_V1 = ('stream_out',)
# The helper's request header naming the file the answer goes to.
OUTPUT_FILE_HEADER = 'X-Cinnabar-Output-File'
MAX_REDIRECTS = 5
# The bundle a URL serves is read from a file in TMPDIR named so.
BUNDLE_PREFIX = 'hg-bundle-'
# The compression engines we decode in Python, and those the helper may.
PYTHON_ENGINES = ('zlib', 'none')
HELPER_ENGINES = ('zstd', 'zlib', 'none', 'bzip2')
READ_SIZE = 65536
# The helper's request header bounding an answer read in memory.
MAX_SIZE_HEADER = 'X-Cinnabar-Max-Size'
# Bounds of answers read in memory (listkeys, heads, batch, known...;
# capabilities), before and after decompression.
MAX_ANSWER = 256 * 1024 * 1024
MAX_CAPABILITIES = 1024 * 1024
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"


def encode_args(args):
    """The urlencoded form of {name: value}, sorted by name."""
    return percent.urlencode(sorted(args.items()))


def split_in_headers(value, prefix, limit):
    """[(name, part), ...] spreading `value` over `<prefix>-1`, `-2`...
    headers whose lines (name, `: `, value, CRLF) are at most `limit`."""
    size = limit - len('%s-000' % prefix) - len(': \r\n')
    if size <= 0:
        raise Abort('the server allows HTTP headers of %d bytes only' % limit)
    return [('%s-%d' % (prefix, number + 1), value[start:start + size])
            for number, start in enumerate(range(0, len(value), size))]


def header_limit(capability):
    """The size from an `httpheader` capability value, or 0."""
    if not capability:
        return 0
    return wireformat.parse_decimal(capability.split(b',', 1)[0]) or 0


def inflate(payload, limit):
    """zlib-decompress `payload`, refusing more than `limit` bytes."""
    import zlib     # here: a fetch with nothing new decompresses nothing
    decompressor = zlib.decompressobj()
    try:
        data = decompressor.decompress(payload, limit + 1)
    except zlib.error as error:
        raise Abort('the server sent a damaged compressed answer (%s)'
                    % error)
    if len(data) > limit:
        raise Abort('the answer of the server is larger than %d bytes '
                    'once decompressed' % limit)
    if not decompressor.eof:
        raise Abort('the server sent a compressed answer cut short')
    return data


def decode_v2(data, limit=MAX_ANSWER):
    """Decode an application/mercurial-0.2 answer with a Python engine."""
    if not data:
        raise Abort('empty answer from the server')
    engine = data[1:1 + data[0]].decode('ascii', 'replace')
    payload = data[1 + data[0]:]
    if engine == 'none':
        return payload
    if engine == 'zlib':
        return inflate(payload, limit)
    raise Abort('the server answered with the %r compression, which we '
                'did not ask for' % engine)


def base_url(url):
    """The repository URL without query or fragment."""
    scheme, netloc, path, _, _ = split_url(url)
    return join_url((scheme, netloc, path, '', ''))


def check_redirect(old, new):
    """Refuse a redirect from https to anything else."""
    import urllib.parse  # redirects are rare: not loaded for the others
    old_scheme = urllib.parse.urlsplit(old).scheme.lower()
    new_scheme = urllib.parse.urlsplit(new).scheme.lower()
    if new_scheme not in ('http', 'https'):
        raise Abort('refusing a redirect to %s: not an http(s) URL'
                    % redact_url(new))
    if old_scheme == 'https' and new_scheme != 'https':
        raise Abort('refusing the redirect from %s to %s: it leaves https'
                    % (redact_url(old), redact_url(new)),
                    hint='use the http:// URL yourself if you trust it')


def check_whole(response, description, what, limit):
    """Raise when the helper says the answer was cut or too large (its
    headers come before the body, which is then drained)."""
    transfer = response.headers.get('x-cinnabar-transfer', 'complete')
    if transfer != 'complete':
        response.body.drain()
    if transfer == 'too large':
        raise Abort('the answer of %s to %s is larger than %d bytes; '
                    'refusing it' % (description, what, limit))
    if transfer != 'complete':
        raise Abort('the answer of %s to %s was cut short (%s); nothing '
                    'was changed' % (description, what,
                                     transfer.partition(' ')[2] or transfer),
                    hint='try again; if it persists, the server or a proxy '
                         'in between is at fault')


def _not_mercurial(response):
    """Whether an answer to `capabilities` is none a Mercurial server
    gives: not found, or another content type."""
    content_type = response.headers.get('content-type', '')
    return response.status == 404 or (response.status == 200 and not (
        content_type.startswith((MEDIA_TYPE_1, MEDIA_TYPE_2, ERROR_TYPE))))


def _host_port(url):
    """`host port N` of an http(s) URL, the port given or its default."""
    import urllib.parse  # only for an error
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == 'https' else 80)
    return '%s port %d' % (parts.hostname, port)


def _lower_first(text):
    return text[:1].lower() + text[1:]


def unreachable(description, url, headers, verb='reach'):
    """The Abort for a request that got no answer at all (the helper's
    `status 0`): what failed, from its X-Cinnabar-Failure line, and what
    to do about it: `cannot <verb> <description>: ...`. `description` is
    the URL as shown, `url` the one asked (for the host and port)."""
    failure = headers.get('x-cinnabar-failure') or 'other no answer'
    kind, _, detail = failure.partition(' ')
    description = '%s %s' % (verb, description)
    if kind == 'resolve':
        return Abort('cannot %s: could not resolve the host name %r'
                     % (description, _host_name(url)))
    if kind == 'connect':
        return Abort('cannot %s: cannot connect to %s (%s)'
                     % (description, _host_port(url), _lower_first(detail)))
    if kind == 'tls':
        return Abort('cannot %s: the TLS handshake with %s failed (%s)'
                     % (description, _host_port(url), detail),
                     hint='if the server speaks plain HTTP on that port, '
                          'use an http:// URL')
    if kind in ('certificate', 'ca-file'):
        return _certificate_error(kind, description, detail, headers)
    return Abort('cannot %s: %s' % (description, detail))


def _host_name(url):
    import urllib.parse  # only for an error
    return urllib.parse.urlsplit(url).hostname


def _certificate_error(kind, description, detail, headers):
    authorities = 'CA file: %s' % headers.get('x-cinnabar-ca-file', 'none')
    if headers.get('x-cinnabar-ca-path'):
        authorities += ', CA path: %s' % headers['x-cinnabar-ca-path']
    if kind == 'ca-file':
        return Abort('cannot %s: cannot read the certificate '
                     'authorities (%s; %s)'
                     % (description, detail, authorities),
                     hint='set http.sslCAInfo (or GIT_SSL_CAINFO) to a file '
                          'of PEM certificates')
    detail = detail.replace('SSL certificate problem: ', '')
    return Abort('cannot %s: server certificate verification failed: %s '
                 '(%s)' % (description, detail, authorities),
                 hint="if you trust the authority that signed the server's "
                      'certificate, name its certificate with '
                      'http.sslCAInfo or GIT_SSL_CAINFO (http.sslVerify='
                      'false turns the check off, unsafely)')


def _status_error(status, description, reason=None):
    if status == 401 and (not reason or _standard_reason(status, reason)):
        return Abort('authentication failed for %s' % description,
                     hint='check your credentials (git uses its credential '
                          'helpers for hg:: URLs too)')
    if reason and not _standard_reason(status, reason):
        # The server said why (hgweb: "ssl required", "push not
        # authorized", "read not authorized"): relay it.
        if status < 500:
            return Abort('%s refused the request: %s (HTTP %d)'
                         % (description, reason, status))
        return Abort('HTTP error %d from %s: %s'
                     % (status, description, reason))
    if status == 403:
        return Abort('access denied to %s' % description)
    if status == 404:
        return Abort('repository not found at %s' % description)
    return Abort('HTTP error %d from %s' % (status, description))


def _standard_reason(status, reason):
    """Whether `reason` is only the usual phrase of `status` (RFC 9110)."""
    from http import HTTPStatus  # only for an error
    try:
        return HTTPStatus(status).phrase.lower() == reason.lower()
    except ValueError:
        return False


class HttpTransport(Transport):
    """A Mercurial server at an http(s) URL, reached through the helper."""

    def __init__(self, url, description, helper):
        self.url = base_url(url)
        self.description = description
        self._helper = helper
        self._trace = Tracer('wire')
        self._capabilities = None
        self.server_caps = {}

    def _request(self, command, args, protocol_header, body_file=None):
        """(url, headers, body) for a command; the request body, if any,
        comes from the file at `body_file`."""
        query = [('cmd', command)]
        headers = [('Accept', MEDIA_TYPE_1), ('User-Agent', USER_AGENT)]
        body = None
        encoded = encode_args(args) if args else ''
        limit = header_limit(self.server_caps.get('httpheader'))
        if body_file is not None:
            headers += [(BODY_FILE_HEADER, os.fsdecode(body_file)),
                        ('Content-Type', MEDIA_TYPE_1)]
        if encoded and body_file is None and (
                'httppostargs' in self.server_caps):
            body = encoded.encode('ascii')
            headers += [('X-HgArgs-Post', str(len(body))),
                        ('Content-Type', MEDIA_TYPE_1)]
        elif encoded and limit:
            headers += split_in_headers(encoded, 'X-HgArg', limit)
        elif encoded:
            query += sorted(args.items())
        if protocol_header and self._speaks_v2():
            headers += split_in_headers(protocol_header, 'X-HgProto',
                                        limit or 1024)
        varying = [n for n, _ in headers if n.startswith('X-Hg')]
        if varying:
            headers.append(('Vary', ','.join(varying)))
        url = '%s?%s' % (self.url, percent.urlencode(query))
        return percent.quote(url, safe=_URL_SAFE), headers, body

    def _speaks_v2(self):
        media_types = self.server_caps.get('httpmediatype', b'').split(b',')
        return b'0.2tx' in media_types

    def _fetch(self, command, args, protocol_header=None, body_file=None,
               limit=None, output_file=None, before_answer=None):
        url, headers, body = self._request(command, args, protocol_header,
                                           body_file)
        self._trace_request(url, headers, body)
        if limit:
            headers = headers + [(MAX_SIZE_HEADER, str(limit))]
        if output_file:
            headers = headers + [(OUTPUT_FILE_HEADER, output_file)]
        response = self._helper.http_fetch(url, headers, body, before_answer)
        if response.status == 0:
            raise unreachable(self.description, url, response.headers)
        if self._trace.enabled:
            self._trace.received('HTTP %d' % response.status)
            for name, value in sorted(response.headers.items()):
                self._trace.received('%s: %s' % (name, value))
        return response

    def _trace_request(self, url, headers, body):
        if not self._trace.enabled:
            return
        post = body is not None or any(n == BODY_FILE_HEADER
                                       for n, _ in headers)
        self._trace.sent('%s %s' % ('POST' if post else 'GET', url))
        for name, value in headers:
            self._trace.sent('%s: %s' % (name, value))

    def _read(self, response, what, limit=MAX_ANSWER):
        """The whole body of an answer read in memory."""
        check_whole(response, self.description, what, limit)
        return response.body.read()

    def _check(self, response):
        """Raise for an answer that is not a Mercurial one."""
        content_type = response.headers.get('content-type', '')
        if content_type.startswith(ERROR_TYPE):
            message = response.body.read().decode('utf-8', 'replace')
            raise Abort('the server at %s failed: %s'
                        % (self.description, message.strip()))
        if response.status != 200:
            response.body.drain()
            raise _status_error(response.status, self.description,
                                response.headers.get('x-cinnabar-reason'))
        return content_type

    def _decode(self, data, content_type, limit=MAX_ANSWER):
        if content_type.startswith(MEDIA_TYPE_2):
            return decode_v2(data, limit)
        if content_type.startswith(MEDIA_TYPE_1):
            return data
        raise Abort('%s does not look like a Mercurial repository '
                    '(unexpected content type %r)'
                    % (self.description, content_type))

    # The Transport interface.

    def capabilities(self):
        return self._capabilities

    def call(self, command, args):
        protocol = '0.1 0.2 comp=' + ','.join(PYTHON_ENGINES)
        if (command in POST_COMMANDS
                and 'httppostargs' not in self.server_caps):
            # The server wants a POST: send an empty body.
            import tempfile
            with tempfile.NamedTemporaryFile(prefix='hg-empty-') as empty:
                response = self._fetch(command, args, protocol, empty.name,
                                       limit=MAX_ANSWER)
                content_type = self._check(response)
                data = self._read(response, command)
        else:
            response = self._fetch(command, args, protocol, limit=MAX_ANSWER)
            content_type = self._check(response)
            data = self._read(response, command)
        return self._decode(data, content_type)

    def import_stream(self, command, args, kind, helper):
        engines = helper.capabilities()
        protocol = '0.1 0.2 comp=' + ','.join(
            e for e in HELPER_ENGINES if e == 'none' or e in engines)
        url, headers, body = self._request(command, args, protocol)
        self._trace_request(url, headers, body)
        status, counts = helper.http_import(url, headers, body, kind)
        self._trace.received('HTTP %d (imported %d changesets, %d '
                             'manifests, %d files)' % ((status,) + counts))
        return counts

    def save_stream(self, command, args, out):
        def copy(read):
            for chunk in iter(lambda: read(READ_SIZE), b''):
                out.write(chunk)
        self.read_stream(command, args, copy)

    def unbundle(self, args, path, bundle2_reply):
        # The answer is not compressed for application/mercurial-0.1,
        # which is what a request without X-HgProto gets.
        response = self._fetch('unbundle', args, body_file=path,
                               limit=MAX_ANSWER)
        content_type = self._check(response)
        data = self._decode(self._read(response, 'unbundle'), content_type)
        if not bundle2_reply:
            code, _, output = data.partition(b'\n')
            return code, output
        from cinnabar.hg import bundle2  # a push's only: not loaded to list
        return bundle2.read_bundle(io.BytesIO(data).read)

    def read_stream(self, command, args, consume):
        # The answer (a whole repository for a stream clone) comes through
        # a named pipe, read as it comes: what it states is checked before
        # more is taken, and closing the pipe on a refusal stops the
        # transfer. Its media type, needed before its headers come, is the
        # one the server answers to our X-HgProto (hgweb answers stream_out
        # as it is, whatever we asked).
        import tempfile
        v1_engine = 'none' if command in UNCOMPRESSED_V1 else 'zlib'
        media_type = MEDIA_TYPE_2 if self._speaks_v2() and (
            command not in UNCOMPRESSED_V1) else MEDIA_TYPE_1
        outcome = []

        def read_answer():
            pipe = self._helper.open_pipe(pipe_path)
            if pipe is None:
                return
            with pipe:
                try:
                    outcome.append(consume(_ChunkReader(self._decoded(
                        pipe, media_type, command, v1_engine)).read))
                except Abort as error:
                    outcome.append(error)

        with tempfile.TemporaryDirectory(prefix='hg-answer-') as directory:
            pipe_path = os.path.join(directory, 'answer')
            os.mkfifo(pipe_path, 0o600)
            response = self._fetch(
                command, args, '0.1 0.2 comp=' + ','.join(PYTHON_ENGINES),
                output_file=pipe_path, before_answer=read_answer)
        content_type = self._check(response)
        if not content_type.startswith(media_type):
            raise Abort('%s answered %s with the unexpected content type %r'
                        % (self.description, command, content_type))
        if not outcome:
            raise Abort('the helper wrote no answer of %s to %s'
                        % (self.description, command))
        if isinstance(outcome[0], Abort):
            raise outcome[0]
        check_whole(response, self.description, command, 0)
        return outcome[0]

    def _decoded(self, body, content_type, command, v1_engine='zlib'):
        """The chunks of a stream command's answer read from `body`,
        decompressed (`v1_engine`: how an application/mercurial-0.1
        answer is)."""
        engine = v1_engine
        if content_type.startswith(MEDIA_TYPE_2):
            size = body.read(1)
            engine = body.read(size[0] if size else 0).decode(
                'ascii', 'replace')
            if not (engine.isalnum() and engine.isascii()):
                raise Abort('%s sent a damaged answer to %s (it names no '
                            'compression engine)'
                            % (self.description, command))
        if engine not in PYTHON_ENGINES:
            raise Abort('the server answered with the %r compression, which '
                        'we did not ask for' % engine)
        chunks = iter(lambda: body.read(READ_SIZE), b'')
        if engine == 'none':
            yield from chunks
            return
        import zlib
        decompressor = zlib.decompressobj()
        try:
            for chunk in chunks:
                yield from _inflated(decompressor, chunk)
            yield decompressor.flush()
        except zlib.error as error:
            raise Abort('%s sent a damaged compressed answer to %s (%s)'
                        % (self.description, command, error))
        if not decompressor.eof:
            raise Abort('the answer of %s to %s was cut short'
                        % (self.description, command))

    # Opening.

    def _serves_git(self):
        """Whether the URL is a git repository behind git's smart HTTP
        (asked only when the capabilities were not a Mercurial answer):
        `GET <url>/info/refs?service=git-upload-pack` gets git's
        advertisement (gitprotocol-http(5))."""
        url = '%s/info/refs?service=git-upload-pack' % self.url.rstrip('/')
        response = self._helper.http_fetch(
            percent.quote(url, safe=_URL_SAFE), [('User-Agent', 'git/2')])
        response.body.drain()
        return response.status == 200 and response.headers.get(
            'content-type') == GIT_ADVERTISEMENT

    def open(self):
        """Ask for the capabilities (following redirects); returns the
        body reader when the URL serves a bundle file instead, else None."""
        for _ in range(MAX_REDIRECTS + 1):
            response = self._fetch('capabilities', {}, limit=MAX_ANSWER)
            location = response.headers.get('location')
            if response.status not in REDIRECTS or not location:
                break
            response.body.drain()
            import urllib.parse  # see check_redirect
            new_url = urllib.parse.urljoin(self.url, location)
            check_redirect(self.url, new_url)
            self.url = base_url(new_url)
            self.description = redact_url(self.url)
            sys.stderr.write('warning: redirecting to %s\n'
                             % self.description)
        else:
            raise Abort('too many redirects from %s' % self.description)
        check_whole(response, self.description, 'capabilities', MAX_ANSWER)
        head = response.body.read(4) if response.status == 200 else b''
        if head in (b'HG10', b'HG20'):
            return head, response.body
        if _not_mercurial(response):
            response.body.drain()  # before asking again; its type tells
            if self._serves_git():
                raise git_repository_error(self.description)
        content_type = self._check(response)
        data = head + response.body.read()
        if len(data) > MAX_CAPABILITIES:
            raise Abort('the capabilities of %s are larger than %d bytes; '
                        'refusing them' % (self.description,
                                           MAX_CAPABILITIES))
        self._capabilities = self._decode(data, content_type,
                                          MAX_CAPABILITIES)
        self.server_caps = wireformat.parse_capabilities(self._capabilities)
        return None


def _inflated(decompressor, chunk):
    """The pieces `chunk` inflates to, READ_SIZE bytes at most each (a
    64 kB chunk of a zlib bomb would be 64 MB at once)."""
    data = decompressor.decompress(chunk, READ_SIZE)
    while True:
        yield data
        if not decompressor.unconsumed_tail:
            return
        data = decompressor.decompress(decompressor.unconsumed_tail,
                                       READ_SIZE)


class _ChunkReader:
    """`read(size)` over an iterable of chunks (fewer bytes only at its
    end)."""

    def __init__(self, chunks):
        self._chunks = iter(chunks)
        self._buffer = b''
        self._offset = 0

    def read(self, size):
        parts = []
        while size:
            if self._offset == len(self._buffer):
                self._buffer = next(self._chunks, None)
                self._offset = 0
                if self._buffer is None:
                    self._buffer = b''
                    break
                continue
            part = self._buffer[self._offset:self._offset + size]
            self._offset += len(part)
            size -= len(part)
            parts.append(part)
        return b''.join(parts)


def _save_bundle(head, body):
    """The path of a temporary file holding the bundle (removed when
    anything fails)."""
    import tempfile
    tmpfiles.remove_stale(None, BUNDLE_PREFIX)
    with tempfile.NamedTemporaryFile(prefix=tmpfiles.own_prefix(
            BUNDLE_PREFIX), suffix='.hg', delete=False) as spool:
        try:
            spool.write(head)
            for chunk in iter(lambda: body.read(READ_SIZE), b''):
                spool.write(chunk)
        except BaseException:
            tmpfiles.remove_files([spool.name])
            raise
        return spool.name


def connect(url, helper):
    """A Peer for the server (or BundleFilePeer for the bundle) at an
    http(s) HgUrl."""
    if 'http' not in helper.capabilities():
        raise Abort('this git-cinnabar-helper was built without HTTP support',
                    hint='rebuild it with libcurl (see the README)')
    transport = HttpTransport(url.url, url.display, helper)
    bundle = transport.open()
    if bundle is not None:
        path = _save_bundle(*bundle)
        from cinnabar.hg.bundlefile import BundleFilePeer
        try:
            return BundleFilePeer(path, helper, url.display, temporary=True)
        except BaseException:
            tmpfiles.remove_files([path])   # a bundle the helper refused
            raise
    return Peer(transport)
