"""How a Mercurial repository's heads and bookmarks appear as git refs.

The `cinnabar.refs` setting (see `cinnabar.config`; `cinnabar.pushrefs`
for `list for-push`) is a comma-separated list among `heads`, `tips`,
`bookmarks` and `topics`, or `all`/`true` (the default, and what an empty
value means). The layout, as git-cinnabar does it:

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

With `topics`, the draft topics of a server with hg-evolve's topic
extension (RemoteState.topics; Mercurial names them `<branch>//<topic>`)
are listed as their branches are, under `refs/heads/topics/<branch>/`:
`<topic>/tip` and `<topic>/<hg id>` (heads and tips), `<topic>/<hg id>`
(heads), `<topic>` (tips); and branches and bookmarks then take their
`branches/` and `bookmarks/` forms, so that no branch name clashes with
`topics/`. A topic goes away from the list when it is published, as in
Mercurial. Whatever the layout, a push may name a topic
`refs/heads/topics/<branch>/<topic>` (topic names hold no `/`; with
`heads`, `topics/<branch>/<topic>/<hg id>` is one of its heads).

A branch's tip is its last head in the server's branchmap order that is
not known to close the branch (the last head when all do). HEAD points to
the `@` bookmark when the server has one (and bookmarks are listed), else
to the `default` branch's tip ref, else to its tip's head ref.

`%` and space in branch and bookmark names are written `%25` and `%20`.
A name that still is not a valid ref name (cinnabar.refname; one git
could not store as a file, too long, among them), or that clashes with
another ref (`a/tip` and `a/tip/tip`), is left out with a warning, the
rest imported.

For a push, `push_target` reads a ref name of the layout back: a branch
(its tip or one of its heads) or a bookmark. Where a layout names heads
(`.../<branch>/<hg id>`), any last component stands for a head of that
branch, as with git-cinnabar: `branches/default/new-head` pushes a new
head of `default` (refused unless forced, as any new head).
"""


from cinnabar.errors import Abort
from cinnabar.ids import HgId, is_hex40
from cinnabar.record import record
from cinnabar.refname import refname_problem, shown

# The refs the remote helper writes what it imports under, for git to read
# once its stream ends: replaced by each import that succeeds (the others
# deleted then), as they were after one that fails, saved with the metadata
# for rollback (cinnabar.snapshots), cleared by reclone.
FETCH_REFS = ('refs/cinnabar/refs/', 'refs/cinnabar/hg/',
              'refs/cinnabar/HEAD')
STYLES = frozenset(('heads', 'tips', 'bookmarks', 'topics'))

RefList = record('RefList', 'refs head warnings')
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
            raise Abort('`%s` is not one of `heads`, `bookmarks`, `tips` '
                        'or `topics`'
                        % word, hint='check the cinnabar.refs setting')
    return frozenset(styles)


Target = record('Target', 'kind name node topic',
                defaults=(None,))
Target.__doc__ = """What a ref stands for on the Mercurial side: `kind` is
`branch`, `bookmark` or `topic`, `name` the branch (also for a topic) or
bookmark name, `topic` the topic's name; for a ref of a head other than
the tip, `node` is the HgId in its name (else None)."""

_FIELDS = {'branch': '(?P<branch>.+)', 'node': '(?P<node>[^/]+)',
           'name': '(?P<name>.+)', 'topic': '(?P<topic>[^/]+)'}

Templates = record('Templates',
                   'head tip bookmark topic_head topic_tip')
# Where a push may name a topic in any layout.
TOPIC_REF = 'refs/heads/topics/{branch}/{topic}'


def quote_name(name):
    return name.replace('%', '%25').replace(' ', '%20')


def unquote_name(name):
    # `%20` and `%25` never overlap and the first replace makes no `%25`:
    # the same as one pass over both.
    return name.replace('%20', ' ').replace('%25', '%')


def _head_and_tip(styles, prefix, prefixed):
    """The (head, tip) templates for branches (`prefix` `branches`, names
    `{branch}`) or topics (`topics`, names `{branch}/{topic}`)."""
    name = '{branch}' if prefix == 'branches' else '{branch}/{topic}'
    base = 'refs/heads/%s/%s' % (prefix, name) if prefixed \
        else 'refs/heads/' + name
    if {'heads', 'tips'} <= styles:
        return base + '/{node}', base + '/tip'
    if 'heads' in styles:
        return base + '/{node}', None
    if 'tips' in styles:
        return None, base
    return None, None


def _templates(styles):
    """The Templates of a layout, None for the names it does not have."""
    head, tip = _head_and_tip(
        styles, 'branches', {'heads', 'tips'} <= styles
        or bool(styles & {'bookmarks', 'topics'}))
    topic_head = topic_tip = bookmark = None
    if 'topics' in styles:
        topic_head, topic_tip = _head_and_tip(styles, 'topics', True)
    if 'bookmarks' in styles:
        bookmark = ('refs/heads/bookmarks/{name}'
                    if styles & {'heads', 'tips', 'topics'}
                    else 'refs/heads/{name}')
    return Templates(head, tip, bookmark, topic_head, topic_tip)


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
                                 % (shown(name), problem))
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
                                     % (shown(longer), shown(shorter)))


def _add_heads(builder, heads, head_template, tip_template, closed,
               **names):
    """Add the refs of one branch's or topic's heads; returns its tip."""
    tip = branch_tip(heads, closed)
    names = {k: quote_name(v) for k, v in names.items()}
    if tip_template:
        builder.add(tip_template.format(**names), tip)
    for head in heads:
        if head_template and (not tip_template or head != tip):
            builder.add(head_template.format(node=head, **names), head)
    return tip


def _add_branches(builder, branchmap, templates, closed):
    default_tip = None
    for branch, heads in branchmap:
        if not heads:
            continue
        tip = _add_heads(builder, heads, templates.head, templates.tip,
                         closed, branch=branch)
        if branch == 'default':
            default_tip = tip
    return default_tip


def _add_topics(builder, topics, templates, closed):
    if not (templates.topic_head or templates.topic_tip):
        return
    for (branch, topic), heads in topics:
        if heads:
            _add_heads(builder, heads, templates.topic_head,
                       templates.topic_tip, closed, branch=branch,
                       topic=topic)


def _head_target(templates, bookmarks, default_tip):
    head_template, tip_template, bookmark_template = templates[:3]
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
    _add_topics(builder, state.topics, templates, closed)
    bookmark_template = templates.bookmark
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
    head, tip, bookmark = _templates(styles)[:3]
    examples = []
    if tip or head:
        examples.append((tip or head).format(branch='<branch>',
                                             node='<hg id>'))
    if bookmark:
        examples.append(bookmark.format(name='<name>'))
    return ' or '.join(examples)


def branch_ref(branch, styles):
    """The ref to push to for `branch` in the layout of `styles`."""
    head, tip = _templates(styles)[:2]
    if tip is None and head is None:
        return '(no ref: this layout has no branches)'
    return (tip or head).format(branch=quote_name(branch), node='<hg id>')


def _template_pattern(template):
    # re is imported here (pushes): a fetch with nothing new does not
    # load it.
    import re
    parts = re.split(r'\{(\w+)\}', template)
    return re.compile(''.join(_FIELDS[p] if i % 2 else re.escape(p)
                              for i, p in enumerate(parts)) + r'\Z')


def push_target(ref, styles):
    """The Target that the ref name `ref` stands for in the layout of
    `styles`, or None when it is not a name of that layout."""
    templates = _templates(styles)
    candidates = (('topic', templates.topic_tip),
                  ('topic', templates.topic_head), ('topic', TOPIC_REF),
                  ('bookmark', templates.bookmark),
                  ('branch', templates.head), ('branch', templates.tip))
    for kind, template in candidates:
        if template is None:
            continue
        match = _template_pattern(template).match(ref)
        if not match:
            continue
        fields = match.groupdict()
        name = fields.get('branch') or fields.get('name')
        node = fields.get('node')
        if node is not None and not is_hex40(node):
            node = None
        topic = fields.get('topic')
        if topic and 'node' in fields and node is None:
            # `topics/<a>/<b>/<c>` without an hg id: the topic <c> of the
            # branch <a>/<b> (TOPIC_REF), not a new head of topic <b>.
            continue
        return Target(kind, unquote_name(name), HgId(node) if node else None,
                      unquote_name(topic) if topic else None)
    return None


def topic_ref(branch, topic):
    """The ref to push to for `topic` of `branch`, in any layout."""
    return TOPIC_REF.format(branch=quote_name(branch),
                            topic=quote_name(topic))
