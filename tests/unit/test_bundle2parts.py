"""The table of bundle2 part handlers (cinnabar.hg.bundle2parts), as the
two readers of servers' answers use it: a push's reply
(cinnabar.hg.pushwire) and a stream clone (cinnabar.hg.streamreader).
Both word the server's abort as the helper does, and both refuse, in
the same words, a mandatory part or part parameter they do not read."""

import io

import pytest

from cinnabar.errors import Abort
from cinnabar.hg import bundle2 as b2
from cinnabar.hg import bundle2parts
from cinnabar.hg import streamreader as sc
from cinnabar.hg import pushwire as ub

REQS = 'generaldelta%2Crevlogv1'


def bundle(*parts):
    """A bundle2 of `parts`: (type, mandatory params, advisory params)."""
    out = io.BytesIO()
    b2.write_start(out)
    for number, (part_type, mandatory, advisory) in enumerate(parts):
        b2.write_part(out, part_type, number, b'', mandatory, advisory)
    b2.write_end(out)
    return out.getvalue()


# An empty stream: no files, no bytes.
STREAM = ('STREAM2', [('requirements', REQS), ('filecount', '0'),
                      ('bytecount', '0')], [])
REPLY = ('reply:changegroup', [], [('return', '1'), ('in-reply-to', '2')])
ABORT = ('ERROR:ABORT', [], [('message', 'no way'), ('hint', 'ask')])


def stream_clone(data, tmp_path):
    spool = sc.Spool(tmp_path)
    try:
        return sc.receive_bundle(io.BytesIO(data).read, spool)
    finally:
        spool.remove()


def push_reply(data):
    return ub.bundle2_result(b2.read_bundle(io.BytesIO(data).read))


def test_both_read_what_they_know(tmp_path):
    assert stream_clone(bundle(STREAM, ('phase-heads', [], [])),
                        tmp_path) == 'stream2'
    result = push_reply(bundle(('output', [], []), REPLY,
                               ('REPLY:OBSMARKERS', [], [('new', '1')])))
    assert result.ok


def test_server_abort_in_one_wording(tmp_path):
    with pytest.raises(Abort) as error:
        stream_clone(bundle(ABORT, STREAM), tmp_path)
    assert (error.value.message, error.value.hint) == (
        'the server aborted: no way', 'ask')
    result = push_reply(bundle(ABORT, REPLY))
    assert (result.ok, result.message, result.hint) == (
        False, 'no way', 'ask')
    abort = bundle2parts.server_abort({'message': 'no way', 'hint': 'ask'})
    assert (abort.message, abort.hint) == (error.value.message, 'ask')


@pytest.mark.parametrize('part, words', [
    (('CHECK:SOMETHING', [], []),
     "the server answered with a 'check:something' part we do not read"),
    (('REPLY:CHANGEGROUP', [('return', '1'), ('frobnicate', 'yes')], []),
     "the server answered with a 'reply:changegroup' part with a "
     "parameter we do not read (frobnicate)"),
])
def test_mandatory_unknown_refused_by_a_push(part, words):
    result = push_reply(bundle(part, REPLY))
    assert (result.ok, result.message) == (False, words)


@pytest.mark.parametrize('part, words', [
    (('OUTPUT', [], []),
     "the server answered with a 'output' part we do not read"),
    (('STREAM2', STREAM[1] + [('frobnicate', 'yes')], []),
     "the server answered with a 'stream2' part with a parameter we do "
     "not read (frobnicate)"),
])
def test_mandatory_unknown_refused_by_a_stream_clone(part, words, tmp_path):
    parts = (part,) if part[0] == 'STREAM2' else (part, STREAM)
    with pytest.raises(Abort) as error:
        stream_clone(bundle(*parts), tmp_path)
    assert error.value.message == words


def test_advisory_unknown_skipped(tmp_path):
    unknown = ('frobnicate', [], [('x', 'y')])
    assert stream_clone(bundle(unknown, STREAM), tmp_path) == 'stream2'
    assert push_reply(bundle(unknown, REPLY)).ok
    # Known to the table, but not a part a push's reply has.
    assert push_reply(bundle(('stream2', [], []), REPLY)).ok


def test_one_handler_a_type():
    with pytest.raises(ValueError):
        bundle2parts.parthandler('error:abort')(lambda op, p, d: None)
