"""How a Mercurial repository's heads and bookmarks appear as git refs.

The `cinnabar.refs` setting (see `cinnabar.config`; `cinnabar.pushrefs`
for `list for-push`) is a comma-separated list among `heads`, `tips` and
`bookmarks`, or `all`/`true` (the default, and what an empty value means).
The layout, as git-cinnabar does it:

=====================  ======================================  ===========
styles                 branch heads and tips                   bookmarks
=====================  ======================================  ===========
heads+tips (+bkmk)     refs/heads/branches/<branch>/tip and    refs/heads/
                       refs/heads/branches/<branch>/<hg id>    bookmarks/
                       for the branch's other heads            <name>
heads+bookmarks        refs/heads/branches/<branch>/<hg id>    (same)
heads                  refs/heads/<branch>/<hg id>
tips+bookmarks         refs/heads/branches/<branch>            (same)
tips                   refs/heads/<branch>
bookmarks                                                      refs/heads/
                                                               <name>
=====================  ======================================  ===========

A branch's tip is its last head in the server's branchmap order that is
not known to close the branch (the last head when all do). HEAD points to
the `@` bookmark when the server has one (and bookmarks are listed), else
to the `default` branch's tip ref, else to its tip's head ref.

`%` and space in branch and bookmark names are written `%25` and `%20`.
A name that still is not a valid ref name, or that clashes with another
ref (`a/tip` and `a/tip/tip`), is left out with a warning.

For a push, `push_target` reads a ref name of the layout back: a branch
(its tip or one of its heads) or a bookmark. Where a layout names heads
(`.../<branch>/<hg id>`), any last component stands for a head of that
branch, as with git-cinnabar: `branches/default/new-head` pushes a new
head of `default` (refused unless forced, as any new head).
"""

import collections
import re

from cinnabar.errors import Abort
from cinnabar.ids import HgId
from cinnabar.refname import refname_problem

STYLES = frozenset(('heads', 'tips', 'bookmarks'))

RefList = collections.namedtuple('RefList', 'refs head warnings')
RefList.__doc__ = """`refs`: [(ref name, HgId), ...] sorted by name;
`head`: the ref name HEAD points to, or None; `warnings`: messages about
names left out."""


def parse_style(value):
    """The set of styles a `cinnabar.refs` value asks for."""
    if not value:
        return STYLES
    styles = set()
    for word in value.split(','):
        if word in ('true', 'all'):
            styles |= STYLES
        elif word in STYLES:
            styles.add(word)
        else:
            raise Abort('`%s` is not one of `heads`, `bookmarks` or `tips`'
                        % word, hint='check the cinnabar.refs setting')
    return frozenset(styles)


Target = collections.namedtuple('Target', 'kind name node')
Target.__doc__ = """What a ref stands for on the Mercurial side: `kind` is
`branch` or `bookmark`, `name` the branch or bookmark name; for a ref of
a branch head other than the tip, `node` is the HgId in its name (else
None)."""

_FIELDS = {'branch': '(?P<branch>.+)', 'node': '(?P<node>[^/]+)',
           'name': '(?P<name>.+)'}


def quote_name(name):
    return name.replace('%', '%25').replace(' ', '%20')


def unquote_name(name):
    return re.sub('%(25|20)', lambda m: '%' if m.group(1) == '25' else ' ',
                  name)


def _templates(styles):
    """(head template, tip template, bookmark template), None if unused."""
    head = tip = bookmark = None
    if {'heads', 'tips'} <= styles:
        head = 'refs/heads/branches/{branch}/{node}'
        tip = 'refs/heads/branches/{branch}/tip'
    elif {'heads', 'bookmarks'} <= styles:
        head = 'refs/heads/branches/{branch}/{node}'
    elif 'heads' in styles:
        head = 'refs/heads/{branch}/{node}'
    elif {'tips', 'bookmarks'} <= styles:
        tip = 'refs/heads/branches/{branch}'
    elif 'tips' in styles:
        tip = 'refs/heads/{branch}'
    if 'bookmarks' in styles:
        bookmark = ('refs/heads/bookmarks/{name}' if styles & {'heads', 'tips'}
                    else 'refs/heads/{name}')
    return head, tip, bookmark


def branch_tip(heads, closed):
    """The last head not in `closed`, else the first head."""
    for head in reversed(heads):
        if head not in closed:
            return head
    return heads[0]


class _Builder:
    def __init__(self):
        self.refs = {}
        self.warnings = []

    def add(self, name, hg_id):
        problem = refname_problem(name)
        if problem:
            self.warnings.append('ignoring ref %s: the name %s'
                                 % (name, problem))
        else:
            self.refs[name] = hg_id

    def drop_clashes(self):
        """Remove refs nested under another ref's name (git cannot have
        both `a/b` and `a/b/c`)."""
        names = sorted(self.refs)
        for shorter, longer in zip(names, names[1:]):
            if longer.startswith(shorter + '/'):
                del self.refs[longer]
                self.warnings.append('ignoring ref %s: it clashes with %s'
                                     % (longer, shorter))


def _add_branches(builder, branchmap, templates, closed):
    head_template, tip_template, _ = templates
    default_tip = None
    for branch, heads in branchmap:
        if not heads:
            continue
        tip = branch_tip(heads, closed)
        quoted = quote_name(branch)
        if branch == 'default':
            default_tip = tip
        if tip_template:
            builder.add(tip_template.format(branch=quoted), tip)
        for head in heads:
            if head_template and (not tip_template or head != tip):
                builder.add(head_template.format(branch=quoted, node=head),
                            head)
    return default_tip


def _head_target(templates, bookmarks, default_tip):
    head_template, tip_template, bookmark_template = templates
    if bookmark_template and '@' in bookmarks:
        return bookmark_template.format(name='@')
    if tip_template:
        return tip_template.format(branch='default')
    if head_template and default_tip:
        return head_template.format(branch='default', node=default_tip)
    return None


def layout(state, styles, closed=frozenset()):
    """The refs for a RemoteState in the given styles, as a RefList.

    `closed` holds the HgIds known to close their branch."""
    templates = _templates(styles)
    builder = _Builder()
    default_tip = _add_branches(builder, state.branchmap, templates, closed)
    bookmark_template = templates[2]
    if bookmark_template:
        for name, hg_id in state.bookmarks.items():
            if not hg_id.is_null:
                builder.add(bookmark_template.format(name=quote_name(name)),
                            hg_id)
    builder.drop_clashes()
    head = _head_target(templates, state.bookmarks, default_tip)
    if head not in builder.refs:
        head = None
    return RefList(sorted(builder.refs.items()), head, builder.warnings)


def push_examples(styles):
    """The names a push may go to in the layout of `styles`, for
    messages (e.g. `refs/heads/branches/<branch>/tip or ...`)."""
    head, tip, bookmark = _templates(styles)
    examples = []
    if tip or head:
        examples.append((tip or head).format(branch='<branch>',
                                             node='<hg id>'))
    if bookmark:
        examples.append(bookmark.format(name='<name>'))
    return ' or '.join(examples)


def branch_ref(branch, styles):
    """The ref to push to for `branch` in the layout of `styles`."""
    head, tip, _ = _templates(styles)
    if tip is None and head is None:
        return '(no ref: this layout has no branches)'
    return (tip or head).format(branch=quote_name(branch), node='<hg id>')


def _template_pattern(template):
    parts = re.split(r'\{(\w+)\}', template)
    return re.compile(''.join(_FIELDS[p] if i % 2 else re.escape(p)
                              for i, p in enumerate(parts)) + r'\Z')


def push_target(ref, styles):
    """The Target that the ref name `ref` stands for in the layout of
    `styles`, or None when it is not a name of that layout."""
    head_template, tip_template, bookmark_template = _templates(styles)
    candidates = (('bookmark', bookmark_template), ('branch', head_template),
                  ('branch', tip_template))
    for kind, template in candidates:
        if template is None:
            continue
        match = _template_pattern(template).match(ref)
        if not match:
            continue
        fields = match.groupdict()
        name = fields.get('branch') or fields.get('name')
        node = fields.get('node')
        if node is not None and not re.fullmatch('[0-9a-f]{40}', node):
            node = None
        return Target(kind, unquote_name(name),
                      HgId(node) if node else None)
    return None
