"""No module of the helper or of the Python side depends on itself through
others: the layers go one way.

For the helper, a module is a name's `.c` and `.h` together (`meter.c`,
`meter.h`): it depends on each module whose header one of its files
includes (`#include "import.h"`). For the Python side, a module is a file
of cinnabar/ (a package is its `__init__.py`): it depends on each module
an `import` or `from` statement of it names, wherever the statement is
(one inside a function is still a dependency, taken later). `from pkg
import name` names the module pkg.name when there is one, else pkg.
That a module's package is imported before it is Python's doing, not a
dependency its code states, and counts for nothing."""

import ast
import os
import re

from conftest import TOP

HELPER = os.path.join(TOP, 'helper')
PACKAGE = 'cinnabar'
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def helper_graph():
    """{module: {modules it includes}} for helper/'s .c and .h files."""
    names = [name for name in os.listdir(HELPER)
             if name.endswith(('.c', '.h'))]
    modules = {name[:-2] for name in names}
    graph = {module: set() for module in modules}
    for name in names:
        with open(os.path.join(HELPER, name)) as source:
            text = source.read()
        for included in INCLUDE.findall(text):
            target = included[:-2] if included.endswith('.h') else None
            if target in modules and target != name[:-2]:
                graph[name[:-2]].add(target)
    return graph


def python_modules():
    """{dotted name: path} for the files of the cinnabar package."""
    modules = {}
    for directory, _, files in os.walk(os.path.join(TOP, PACKAGE)):
        relative = os.path.relpath(directory, TOP).split(os.sep)
        for name in files:
            if not name.endswith('.py'):
                continue
            parts = relative + ([] if name == '__init__.py'
                                else [name[:-3]])
            modules['.'.join(parts)] = os.path.join(directory, name)
    return modules


def imported(node, module, is_package, modules):
    """The modules of `modules` an Import or ImportFrom `node` of
    `module` names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in modules}
    base = node.module or ''
    if node.level:
        parts = module.split('.')
        if not is_package:
            parts = parts[:-1]
        parts = parts[:len(parts) - (node.level - 1)]
        base = '.'.join(parts + ([base] if base else []))
    found = set()
    for alias in node.names:
        name = base + '.' + alias.name
        if name in modules:
            found.add(name)
        elif base in modules:
            found.add(base)
    return found


def python_graph():
    """{module: {modules it imports}} for the cinnabar package."""
    modules = python_modules()
    graph = {}
    for module, path in modules.items():
        with open(path) as source:
            tree = ast.parse(source.read(), path)
        is_package = path.endswith('__init__.py')
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                targets |= imported(node, module, is_package, modules)
        targets.discard(module)
        graph[module] = targets
    return graph


def cycles(graph):
    """One cycle, as a list of modules from a module back to it, for each
    set of modules that depend on each other (Tarjan's strongly connected
    components, each walked for a path)."""
    index = {}
    low = {}
    stack = []
    on_stack = set()
    components = []

    def connect(start):
        # Iterative, so that a long chain does not reach Python's limit.
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [cycle_in(graph, component) for component in components]


def cycle_in(graph, component):
    """A path from the smallest module of `component` back to it, through
    the component only (breadth first: a shortest one)."""
    start = min(component)
    came_from = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & component):
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1] + [start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise AssertionError('no cycle in %s' % sorted(component))


def describe(found):
    return '\n'.join(' -> '.join(cycle) for cycle in found)


def test_cycles_finds_and_walks_a_cycle():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a', 'd'}, 'd': set(),
             'e': {'d'}}
    assert cycles(graph) == [['a', 'b', 'c', 'a']]
    assert cycles({'x': {'y'}, 'y': {'x'}}) == [['x', 'y', 'x']]
    assert cycles({'x': {'y'}, 'y': set()}) == []


def test_relative_and_from_imports_resolve():
    modules = {'p', 'p.a', 'p.b'}
    node = ast.parse('from . import a, c').body[0]
    assert imported(node, 'p.b', False, modules) == {'p.a', 'p'}
    node = ast.parse('from p.a import thing').body[0]
    assert imported(node, 'p.b', False, modules) == {'p.a'}
    node = ast.parse('import p.b').body[0]
    assert imported(node, 'p.a', False, modules) == {'p.b'}


def test_helper_includes_have_no_cycle():
    found = cycles(helper_graph())
    assert not found, 'helper/ modules include each other:\n' + \
        describe(found)


def test_python_imports_have_no_cycle():
    found = cycles(python_graph())
    assert not found, 'cinnabar modules import each other:\n' + \
        describe(found)
