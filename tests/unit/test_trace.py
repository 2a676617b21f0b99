"""What GIT_CINNABAR_LOG / cinnabar.log values mean (cinnabar.trace)."""

import os

from cinnabar.trace import CHANNELS, parse_log_setting


def test_channels_and_levels():
    assert parse_log_setting('helper:3,wire:2') == (None, {'helper'})
    assert parse_log_setting('*:3') == (None, set(CHANNELS))
    assert parse_log_setting('*:1') == (None, set())
    assert parse_log_setting('raw-wire:4') == (None, {'wire'})
    assert parse_log_setting('remote-helper') == (None, {'remote-helper'})
    assert parse_log_setting('true') == (None, set(CHANNELS))


def test_paths():
    assert parse_log_setting('/tmp/x.log') == ('/tmp/x.log', set(CHANNELS))
    assert parse_log_setting('/tmp/x.log,wire:3') == ('/tmp/x.log',
                                                      {'wire'})
    # A colon in a path is not a level.
    assert parse_log_setting('/tmp/a:b') == ('/tmp/a:b', set(CHANNELS))
    assert parse_log_setting('helper:x') == (
        os.path.abspath('helper:x'), set(CHANNELS))
    assert parse_log_setting('logs/t.log') == (
        os.path.join(os.getcwd(), 'logs', 't.log'), set(CHANNELS))


def test_upstream_syntax():
    """git-cinnabar's `target[:level][>path]` items, level names, and its
    targets we have nothing for."""
    assert parse_log_setting('raw-wire:debug>/tmp/t.log') == (
        '/tmp/t.log', {'wire'})
    assert parse_log_setting('*:info>/tmp/t.log') == ('/tmp/t.log',
                                                      set(CHANNELS))
    assert parse_log_setting('*:warn') == (None, set())
    assert parse_log_setting('raw-wire::capabilities:4,helper') == (
        None, {'wire', 'helper'})
    assert parse_log_setting('find-common:debug>/tmp/t.log') == (
        '/tmp/t.log', set())
    assert parse_log_setting('root:3,wire:trace') == (None, {'wire'})


def test_setting_read_at_the_first_line(monkeypatch, capsys):
    """A tracer made while git's configuration is still being read does
    not wait for it (the helper's is made as the helper is spawned): the
    setting is looked up at the first line."""
    from cinnabar import trace
    read = []
    monkeypatch.delenv('GIT_CINNABAR_TRACE', raising=False)
    monkeypatch.delenv('GIT_CINNABAR_LOG', raising=False)
    monkeypatch.setattr(trace.git, 'config',
                        lambda name: read.append(name) or 'helper')
    trace._sinks.cache_clear()
    try:
        tracer = trace.Tracer('helper')
        assert read == []
        tracer.sent(b'version')
        assert read == ['cinnabar.log']
        assert capsys.readouterr().err == 'helper> version\n'
    finally:
        trace._sinks.cache_clear()
