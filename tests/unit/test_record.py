"""cinnabar.record: the tuples with named fields the modules define, and
cinnabar.resources, the session's stack of things to release; both stand
in for what git-remote-hg no longer imports (collections, contextlib)."""

import copy

import pytest

from cinnabar.record import record
from cinnabar.resources import Resources

Point = record('Point', 'x y label', defaults=('none',))


def test_record_is_a_tuple_with_named_fields():
    point = Point(1, 2)
    assert point == (1, 2, 'none') and isinstance(point, tuple)
    assert (point.x, point.y, point.label) == (1, 2, 'none')
    assert Point(y=2, x=1, label='a') == (1, 2, 'a')
    assert hash(point) == hash((1, 2, 'none'))
    x, y, label = point
    assert (x, y, label) == (1, 2, 'none')
    assert repr(point) == "Point(x=1, y=2, label='none')"
    assert point._replace(label='b') == Point(1, 2, 'b')
    assert copy.deepcopy(point) == point
    assert type(copy.copy(point)) is Point


@pytest.mark.parametrize('args, kwargs, message', [
    ((1,), {}, "Point: missing argument 'y'"),
    ((1, 2, 3, 4), {}, 'Point takes 3 arguments, 4 given'),
    ((1, 2), {'z': 3}, "Point: unexpected argument 'z'"),
])
def test_record_bad_arguments(args, kwargs, message):
    with pytest.raises(TypeError) as error:
        Point(*args, **kwargs)
    assert str(error.value) == message


class Recorder:
    def __init__(self, log, name, swallow=False, fail=None):
        self.log, self.name, self.swallow, self.fail = log, name, swallow, fail

    def __enter__(self):
        self.log.append('enter ' + self.name)
        return self.name

    def __exit__(self, exc_type, exc_value, traceback):
        self.log.append('exit %s %s' % (self.name, exc_value))
        if self.fail:
            raise self.fail
        return self.swallow


def test_resources_released_last_first():
    log = []
    with Resources() as resources:
        assert resources.enter_context(Recorder(log, 'a')) == 'a'
        resources.callback(log.append, 'callback')
        resources.enter_context(Recorder(log, 'b'))
    assert log == ['enter a', 'enter b', 'exit b None', 'callback',
                   'exit a None']


def test_resources_pass_on_the_exception():
    log = []
    with pytest.raises(KeyError):
        with Resources() as resources:
            resources.enter_context(Recorder(log, 'a'))
            raise KeyError('k')
    assert log == ['enter a', "exit a 'k'"]


def test_resources_exit_failing_replaces_the_exception():
    log = []
    with pytest.raises(ValueError) as error:
        with Resources() as resources:
            resources.enter_context(Recorder(log, 'a'))
            resources.enter_context(Recorder(log, 'b',
                                             fail=ValueError('b failed')))
            raise KeyError('k')
    assert log == ['enter a', 'enter b', "exit b 'k'", 'exit a b failed']
    assert isinstance(error.value.__context__, KeyError)


def test_resources_exit_may_swallow():
    log = []
    with Resources() as resources:
        resources.enter_context(Recorder(log, 'a'))
        resources.enter_context(Recorder(log, 'b', swallow=True))
        raise KeyError('k')
    assert log == ['enter a', 'enter b', "exit b 'k'", 'exit a None']
