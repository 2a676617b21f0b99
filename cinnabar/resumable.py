"""Downloading one URL to a file under the git dir, resuming when cut.

The bytes go through the helper's `http fetch` with an output file (see
helper/PROTOCOL.md), so git's `http.*` settings and credential helpers
apply. The file is `<git dir>/cinnabar/downloads/<key>.part`, `<key>`
being a digest of the URL without its user and password
(cinnabar.redact); `<key>.json` next to it records what a resume needs:
that URL (never the credentials), the validator of the bytes we have
(the ETag, or else the Last-Modified date, of the answer they came from)
and the total size.

A download that was cut goes on from where it stopped, with a range
request (RFC 9110, section 14):

    Range: bytes=<bytes we have>-
    If-Range: <validator>

The server answers `206 Partial Content` with `Content-Range: bytes
<first>-<last>/<total>` (we check that <first> is what we have), or `200`
with the whole resource when it changed since (or does not do ranges):
we then start again from the beginning. A `416` with `Content-Range:
bytes */<total>` where <total> is what we have means we have it all. This
happens within a run (a cut transfer is retried, MAX_ATTEMPTS times in
all) and across runs: the partial file stays until `discard()`. Without
a validator, a cut download starts again from the beginning.

With `magic` (the words a file of the kind wanted starts with), a body
starting otherwise is refused once its first bytes tell, before anything
is saved (the helper's `X-Cinnabar-Output-Magic`): an endless answer that
is no such file costs a few bytes, not a disk.

Only a transfer that was cut (an answer whose body ended early) is tried
again: a request that got no answer at all (host not found, connection
refused, TLS failure: the helper's `status 0`) is one error at once, no
retry fixing those.
"""

import hashlib
import json
import os
import re
import tempfile
import time
import urllib.parse

from cinnabar.errors import Abort
from cinnabar.hg.httptransport import check_redirect, unreachable
from cinnabar.hg.wireformat import parse_decimal
from cinnabar import redact, tmpfiles
from cinnabar.redact import redact_url

MAX_ATTEMPTS = 5
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
RETRY_DELAY = 0.5
DOWNLOADS_DIR = os.path.join('cinnabar', 'downloads')
OUTPUT_HEADER = 'X-Cinnabar-Output-File'
MAGIC_HEADER = 'X-Cinnabar-Output-Magic'
_CONTENT_RANGE = re.compile(r'bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)\s*\Z')


class DownloadError(Abort):
    """The download failed (the partial file, if any, is kept)."""


def parse_content_range(value):
    """(first, last, total) from a Content-Range value; None for the
    parts that are `*`; raises ValueError when it is not one."""
    match = _CONTENT_RANGE.match(value or '')
    if not match:
        raise ValueError('invalid Content-Range %r' % value)
    first, last, total = match.groups()
    as_int = (lambda text: None if text in (None, '*') else int(text))
    return as_int(first), as_int(last), as_int(total)


def validator(headers):
    """What If-Range may carry for an answer: a strong ETag, else the
    Last-Modified date, else None."""
    etag = headers.get('etag')
    if etag and not etag.startswith('W/'):
        return etag
    return headers.get('last-modified') or None


def _display(url):
    return redact_url(url)


def forget_credentials(directory):
    """Remove the downloads of `directory` whose record holds a URL with
    credentials (as versions before this one stored them)."""
    for name in os.listdir(directory):
        if not name.endswith('.json'):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path) as f:
                url = json.load(f).get('url')
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(url, str) and redact_url(url) != url:
            tmpfiles.remove_files((path, path[:-len('.json')] + '.part'))


class Download:
    """The download of `url` into the git dir at `git_dir`; `magic`:
    (the words its file may start with, what such a file is)."""

    def __init__(self, url, git_dir, say=None, magic=None):
        self.url = url
        self._magic = magic
        self._stored_url = redact_url(url)
        directory = os.path.join(git_dir, DOWNLOADS_DIR)
        key = hashlib.sha256(self._stored_url.encode('utf-8')).hexdigest()
        key = key[:20]
        self.path = os.path.join(directory, key + '.part')
        self._info_path = os.path.join(directory, key + '.json')
        self._say = say or redact.say
        self.requests = 0

    # What we know of the bytes we have.

    def _load_info(self):
        try:
            with open(self._info_path) as f:
                info = json.load(f)
        except (OSError, ValueError):
            return {}
        return info if info.get('url') == self._stored_url else {}

    def _save_info(self, info):
        info = dict(info, url=self._stored_url)
        fd, temporary = tempfile.mkstemp(
            dir=os.path.dirname(self._info_path), prefix='.info-')
        try:
            with os.fdopen(fd, 'w') as f:
                json.dump(info, f)
            os.replace(temporary, self._info_path)
        except BaseException:
            os.unlink(temporary)
            raise

    def _have(self):
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def discard(self):
        """Remove the file and what we know of it."""
        for path in (self.path, self._info_path):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    # Fetching.

    def fetch(self, helper):
        """Get the whole resource into `self.path`; returns the path."""
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        forget_credentials(os.path.dirname(self.path))
        info = self._load_info()
        if not info.get('validator'):
            self.discard()
            info = {}
        for attempt in range(MAX_ATTEMPTS):
            if attempt:
                time.sleep(RETRY_DELAY)
            have = self._have()
            if have and attempt == 0:
                self._say('resuming the download of %s at %d bytes'
                          % (_display(self.url), have))
            info, done = self._one_request(helper, info, have)
            if done:
                return self.path
        raise DownloadError('the download of %s failed %d times (%d bytes '
                            'saved so far)' % (_display(self.url),
                                               MAX_ATTEMPTS, self._have()),
                            hint='run the command again to resume it')

    def _request(self, helper, headers):
        """Follow redirects ourselves (the helper only does when git's
        http.followRedirects is true); returns the last response."""
        url = self.url
        headers = list(headers) + [(OUTPUT_HEADER, self.path)]
        if self._magic:
            headers.append((MAGIC_HEADER, ' '.join(
                word.decode('ascii') for word in self._magic[0])))
        for _ in range(MAX_REDIRECTS + 1):
            self.requests += 1
            response = helper.http_fetch(url, headers)
            location = response.headers.get('location')
            if response.status not in REDIRECTS or not location:
                return response
            response.body.drain()
            new_url = urllib.parse.urljoin(url, location)
            check_redirect(url, new_url)
            url = new_url
        raise DownloadError('too many redirects from %s' % _display(self.url))

    def _one_request(self, helper, info, have):
        """One request for what we lack; returns (info, done)."""
        headers = []
        if have:
            headers = [('Range', 'bytes=%d-' % have),
                       ('If-Range', info['validator'])]
        response = self._request(helper, headers)
        response.body.drain()
        status, answer = response.status, response.headers
        cut = answer.get('x-cinnabar-transfer', 'complete') != 'complete'
        if status == 0:
            error = unreachable(_display(self.url), self.url, answer,
                                'download')
            raise DownloadError(error.message, hint=error.hint)
        if status == 416 and have:
            return self._unsatisfiable(info, have, answer)
        transfer, _, start = answer.get('x-cinnabar-transfer', '').partition(
            ' start ')
        if transfer == 'unexpected':
            self.discard()
            raise DownloadError(self._not_magic(start))
        if status not in (200, 206):
            raise DownloadError('HTTP error %d from %s'
                                % (status, _display(self.url)))
        total = self._total(status, answer, have)
        info = {'validator': validator(answer), 'total': total}
        if info['validator']:
            self._save_info(info)
        size = self._have()
        if total is not None and size > total:
            self.discard()
            return {}, False
        if not cut and (total is None or size == total):
            return info, True
        if not info['validator']:
            # No way to ask for the rest of these very bytes.
            self.discard()
            info = {}
        self._say('warning: the download of %s was cut at %d of %s bytes '
                  '(%s); resuming' % (_display(self.url), size,
                                      total if total is not None else '?',
                                      answer.get('x-cinnabar-transfer')))
        return info, False

    def _not_magic(self, start):
        """The error for a body starting with the bytes in hex `start`."""
        words, what = self._magic
        try:
            head = bytes.fromhex(start)[:max(len(w) for w in words)]
        except ValueError:
            head = b''
        return '%s is not %s (unknown header %r)' % (
            _display(self.url), what, head.decode('latin-1'))

    def _total(self, status, answer, have):
        """The size of the whole resource, checking a 206 answer."""
        if status == 200:
            length = answer.get('content-length', '')
            return parse_decimal(length)
        try:
            first, _, total = parse_content_range(
                answer.get('content-range'))
        except ValueError as error:
            self.discard()
            raise DownloadError('%s: %s' % (_display(self.url), error))
        if first != have:
            # The helper appended bytes from elsewhere: start again.
            self.discard()
            raise DownloadError('%s answered bytes from %s instead of %d'
                                % (_display(self.url), first, have),
                                hint='run the command again')
        return total

    def _unsatisfiable(self, info, have, answer):
        try:
            _, _, total = parse_content_range(answer.get('content-range'))
        except ValueError:
            total = None
        if total == have:
            return info, True
        self.discard()
        return {}, False
