"""Keeping credentials out of what people and logs see.

A URL may carry a user and password (`scheme://user:password@host/...`,
RFC 3986 "userinfo"). As git does for the URLs it shows, what we print,
trace or put in error messages drops the whole userinfo part:
`https://user:secret@host/repo` is shown as `https://host/repo`.

Every line for people goes out through `say` (errors, warnings, progress
of downloads), the traces through `redact_text` (cinnabar.trace), and
what is stored (resume data, FETCH_HEAD) keeps only `redact_url(url)`.
"""

import sys

# `scheme://userinfo@`: the userinfo ends at the last `@` before the
# path, query or fragment (or whitespace, in free text).
_USERINFO = r'\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@'


def _without_userinfo(text):
    if '://' not in text:
        return text
    # re is imported here, when something is shown: a fetch with nothing
    # new, which people run all day, does not load it (re caches the
    # compiled pattern).
    import re
    return re.sub(_USERINFO, r'\1', text)


def redact_url(url):
    """`url` without its userinfo."""
    return _without_userinfo(url)


def redact_text(text):
    """`text` with the userinfo of every URL in it removed."""
    return _without_userinfo(text)


def say(text):
    """Write the line `text` to standard error, without credentials."""
    sys.stderr.write(_without_userinfo(text) + '\n')
    sys.stderr.flush()
