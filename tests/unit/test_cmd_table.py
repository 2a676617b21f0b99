"""The `git cinnabar` command table (cinnabar/cmd/__init__.py): every
module of cinnabar/cmd with a `run` is in it, once, and nothing else."""

import importlib
import pkgutil

from cinnabar import cmd


def test_table_names_each_command_module_once():
    modules = {}
    for info in pkgutil.iter_modules(cmd.__path__):
        module = importlib.import_module('cinnabar.cmd.' + info.name)
        if hasattr(module, 'run'):
            modules[info.name] = module
    table = [entry.module for entry in cmd.COMMANDS]
    assert sorted(table) == sorted(modules)
    assert len({entry.name for entry in cmd.COMMANDS}) == len(table)
    for entry in cmd.COMMANDS:
        module = cmd.command(entry.name)
        assert module is modules[entry.module]
        assert callable(module.run) and module.__doc__.strip()
        assert entry.name == entry.module.replace('_', '-')


def test_unknown_names():
    for name in ('options', 'conversion', 'self_update', '', 'help'):
        assert cmd.command(name) is None
