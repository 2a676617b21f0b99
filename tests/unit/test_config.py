"""cinnabar.experiments as cinnabar/config.py reads it for the Python
side: comma-separated words, a word alone turns its experiment on."""

import pytest

from cinnabar import config


@pytest.fixture
def experiments(monkeypatch):
    def set_value(value):
        monkeypatch.delenv('GIT_CINNABAR_EXPERIMENTS', raising=False)
        monkeypatch.setattr(config.git, 'config',
                            lambda key: value
                            if key == 'cinnabar.experiments' else None)
    return set_value


def test_words(experiments):
    experiments('merge,tag,similarity=50')
    assert config.experiment('tag')
    assert config.experiment('merge')
    assert not config.experiment('strip')
    # A word with a value is that value's, not the experiment alone.
    assert not config.experiment('similarity')


def test_unset_and_empty(experiments):
    for value in (None, '', ','):
        experiments(value)
        assert not config.experiment('tag')


def test_whole_words_only(experiments):
    experiments('tags,strip=1, branch')
    for name in ('tag', 'strip', 'branch'):
        assert not config.experiment(name)


def test_environment_wins(experiments, monkeypatch):
    experiments('tag')
    monkeypatch.setenv('GIT_CINNABAR_EXPERIMENTS', 'strip')
    assert config.experiment('strip')
    assert not config.experiment('tag')
