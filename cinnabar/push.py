"""Pushing git commits to a Mercurial server (git's `push` command).

For a batch of `push [+]<src>:<dst>` requests:

1. Each `<dst>` is read back through the ref layout (`refs.push_target`):
   a branch (its tip, or one of its heads), a topic (hg-evolve's:
   `topics/<branch>/<topic>`) or a bookmark. Deleting a
   bookmark (`:bookmarks/<name>`) is a `pushkey` from its server value to
   nothing; deleting any other ref is refused. A ref that is none of
   those (`refs/heads/HEAD` when pushing `refs/remotes/origin/*`) sends
   its commits as the others do, and succeeds when the push sent
   changesets, as with git-cinnabar (which then says nothing changed).
2. What to send: the commits reachable from the `<src>`s that the server
   lacks, parents first: one `git rev-list` of all of them, stopping at
   the commits of the server heads we know and of our own heads the
   server has, minus the commits whose changesets the server already has
   (`known`). Only the pushed commits are kept per ref; what each ref
   brings is asked of the helper (`is-ancestor`: git's reachability
   code, in one process for all the questions) in the rare checks that
   need it (new roots, blame for new heads).
3. Checks that need only git: history unrelated to the server's (no
   commit of it is a changeset we know) going to a server that is not
   empty, refused even when forced unless the metadata is of that
   repository (the server knows one of its root changesets), as
   git-cinnabar does; a new root (a commit without parents) on a
   server that is not empty; a bookmark move that is not a fast-forward,
   or from a changeset we do not have; a branch ref whose commit is
   already on the server but is not one of the branch's heads; a push to
   a topic that does not descend from the topic's heads on the server
   (a non-fast-forward: forced, it replaces them, see 4.). A bookmark
   or topic head we do not know may be a changeset the push makes (a
   commit made as the server's changeset was, e.g. `git cinnabar tag`'s
   as `hg tag`'s): when the push sends commits, those two checks wait
   until their changesets are made (4.); what the server has already
   comes back as "added 0 changesets".
4. The helper makes a changegroup of all the commits (`changegroup`),
   recording their changesets pending `finish`; we wrap it in the bundle
   for `unbundle` and ask the helper for the bundle's branch heads
   (`bundle-heads`). New commits a push to a topic leads to get its
   branch and topic (the `topic` extra); a forced one that replaces the
   topic's changesets adds an `OBSMARKERS` part saying which old
   changesets the new ones replace (`cinnabar.topics`); to a server
   that takes no markers of our format, the changesets go without
   them, with a warning (`hg push` sends them so, silently). Checks that
   need the branches: a commit pushed to a
   branch ref must be on that branch (new commits take the branch of
   their first parent); no branch may end up with more heads than it
   has (a server head of the branch that we do not have counts as one
   that stays: "fetch first"), heads carrying a bookmark we push aside;
   no new branch unless forced, as `hg push --new-branch` (a topic's
   branch aside). When a check refuses a ref, the
   pending changesets are dropped (`abort`) and the others are tried
   again without it.
5. `unbundle` sends it all (with the heads we decided on, so the server
   refuses if they changed meanwhile); on success the changesets are
   kept (`finish`), then bookmarks are set with `pushkey`.

A `+` on a request, or `option force true`, skips the checks that a
force skips in git: new heads, new roots, new branches, bookmark moves
that are not fast-forwards. With `option dry-run true` everything but
the sending happens, and nothing is kept (but with `cinnabar.data`
`force`, the changesets made are kept, as git-cinnabar does).

Phases are not stored: a publishing server makes what it receives
public, a non-publishing one keeps it draft. A forced push to a topic
asks the server's phases (`listkeys phases`) when it makes the markers:
only drafts are replaced, and rewriting a changeset of the topic that
was published since the fetch is refused. Heads of topics are not heads
of their branch (hg-evolve): the branch head checks leave them out.
"""

import collections
import os
import re
import shutil
import sys

from cinnabar import config, discovery, git, refs, tags, tmpfiles, topics
from cinnabar.errors import Abort, describe_os_error
from cinnabar.helper import HelperError
from cinnabar.hg import obsmarkers, pushwire
from cinnabar.ids import HgId
from cinnabar.record import record

PushSpec = record('PushSpec', 'src dst force')
PushSpec.__doc__ = """One `push` request from git: `src` is empty for a
deletion; `force` is set by a leading `+`."""

RACED = "the server's heads changed since we fetched; fetch first"
# Where a push writes its changegroup and bundle, under TMPDIR.
SPOOL_PREFIX = 'cinnabar-push-'
# The Target kind of a ref outside the layout (see
# Pusher._check_outside_layout).
OUTSIDE_LAYOUT = 'outside layout'


def parse_push(argument):
    """The PushSpec of the argument of a `push` command."""
    force = argument.startswith('+')
    if force:
        argument = argument[1:]
    src, colon, dst = argument.rpartition(':')
    if not colon or not dst:
        raise Abort('invalid push request from git: %r' % argument)
    return PushSpec(src, dst, force)


DATA_POLICIES = ('phase', 'always', 'never', 'force')


def data_policy(remote):
    """Whether to keep the metadata of what is pushed: the setting `data`
    (GIT_CINNABAR_DATA, remote.<remote>.cinnabar-data, cinnabar.data).

    `always` keeps it, `never` drops it (a later fetch brings the
    changesets back), `phase` (the default) keeps it when the server made
    them public, i.e. when it is publishing, or publishes what is pushed
    without a topic (hg-evolve's `topic.publish-bare-branch`, as on
    Heptapod): newly pushed changesets are drafts on a non-publishing
    server (but those pushed to a topic are kept: replacing them later
    needs them). `force` is `always`, and also keeps
    the changesets a `--dry-run` makes (without sending them).
    """
    policy = (config.lookup('data', remote) or 'phase').lower()
    if policy not in DATA_POLICIES:
        raise Abort('cinnabar.data must be one of %s, not %r'
                    % (', '.join(DATA_POLICIES), policy))
    return policy


class RefPush:
    """What happens to one ref: the request, its Target, the commit and
    whether there is something to send; `error` once it is refused."""

    def __init__(self, spec, force):
        self.spec = spec
        self.force = force
        self.target = None
        self.commit = None
        # Whether the server lacks the commit (then it lacks some of
        # its history too: all of it is sent, see Pusher._walk).
        self.sending = False
        # For a forced push to a topic: the commits of the server's heads
        # of the topic that the pushed commit does not descend from.
        self.replaced = []
        # Whether a check waits for the changesets of what is sent (see
        # Pusher._check_later).
        self.recheck = False
        self.error = None

    @property
    def dst(self):
        return self.spec.dst

    def refuse(self, message):
        if self.error is None:
            self.error = message


def show_remote_output(output):
    for line in output.decode('utf-8', 'replace').splitlines():
        sys.stderr.write('remote: %s\n' % line)
    sys.stderr.flush()


def topic_label(target):
    """How messages name the topic of a push's Target."""
    return 'topic %s of branch %s' % (target.topic, target.name)


def topic_name_problem(name):
    """Why `hg topic` would refuse `name`, or None: hg-evolve takes
    letters, digits, `-`, `_` and `.`, not a number nor `tip`, `null`,
    `.` (names Mercurial reserves)."""
    if not re.fullmatch(r'[-_.\w]+', name):
        return ('"%s" is not a topic name hg-evolve takes (letters, '
                'digits, "-", "_" and "." only)' % name)
    if name in ('tip', 'null', '.') or name.isdigit():
        return '"%s" is reserved by Mercurial as a topic name' % name
    return None


def _git_user():
    """`Name <email>` from git's user.name and user.email, for the `user`
    of obsolescence markers."""
    name = git.config('user.name') or 'git-cinnabar'
    email = git.config('user.email')
    return '%s <%s>' % (name, email) if email else name


class Pusher:
    """One batch of pushes to `peer`, whose RemoteState is `state`, with
    refs laid out in `styles` (see cinnabar.refs)."""

    def __init__(self, peer, helper, state, styles, force=False,
                 dry_run=False, remote=None, quiet=False):
        self.peer = peer
        # With -q, the server's output only when it refused something.
        self.quiet = quiet
        self.remote = remote
        self.helper = helper
        self.state = state
        self.styles = styles
        self.force_all = force
        self.dry_run = dry_run
        # {GitId: HgId} of the pushed commits (not of all the commits
        # sent: those are only streamed to the helper).
        self._hg_of = {}
        # From the bundle's branch heads: {HgId: branch}, and
        # {branch: [GitId of the heads pushed to it]}.
        self._branch_of = {}
        self._pushed_heads = {}
        # From one walk of the history of all the pushed commits: the
        # pushed commits walked, the commits to send (parents first), and
        # those of them without parents.
        self._walked = (frozenset(), [])
        self._roots = []
        self._exclude = []
        # From the same walk: the parents of the commits to send that no
        # changeset stands for (new commits), and the pushed commits whose
        # history holds a changeset we know.
        self._new_parents = {}
        self._related = set()
        # From _set_branches: {commit: branch or (branch, topic)}.
        self._set = {}
        self._warned_without_markers = False
        # Whether changesets were sent (or, with --dry-run, would be).
        self._sent = False

    # The whole batch.

    def push(self, specs):
        """Push the PushSpecs; returns [(dst, error message or None)]."""
        if self.peer.capable('unbundle') is None:
            raise Abort('cannot push to %s: it does not take pushes'
                        % self.peer.description)
        self.data = data_policy(self.remote)
        pushes = [RefPush(s, s.force or self.force_all) for s in specs]
        self._resolve(pushes)
        self._find_commits([p for p in pushes
                            if p.error is None and p.commit is not None])
        for push in pushes:
            if push.error is None and push.commit is not None:
                self._check_without_branches(push)
        sending = [p for p in pushes if p.error is None and p.sending]
        if sending:
            self._send(sending)
        for push in pushes:
            if push.error is None and push.target.kind == 'bookmark':
                self._set_bookmark(push)
            elif push.error is None and push.target.kind == OUTSIDE_LAYOUT:
                self._check_outside_layout(push)
        return [(p.dst, p.error) for p in pushes]

    # 1. What each request means.

    def _resolve(self, pushes):
        with git.CommitResolver() as resolver:
            for push in pushes:
                push.target = refs.push_target(push.dst, self.styles)
                if push.dst.startswith('refs/tags/'):
                    push.refuse(tags.PUSH_REFUSAL)
                elif not push.spec.src:
                    self._resolve_deletion(push)
                elif push.target is None:
                    # Sends its commits as any push does, as git-cinnabar
                    # does (see _check_outside_layout).
                    push.target = refs.Target(OUTSIDE_LAYOUT, None, None)
                    push.commit = resolver.resolve(push.spec.src)
                    if push.commit is None:
                        push.refuse('%s is not a commit' % push.spec.src)
                elif push.target.kind == 'topic' and \
                        topic_name_problem(push.target.topic):
                    push.refuse('%s: %s' % (push.dst, topic_name_problem(
                        push.target.topic)))
                else:
                    push.commit = resolver.resolve(push.spec.src)
                    if push.commit is None:
                        push.refuse('%s is not a commit' % push.spec.src)

    def _resolve_deletion(self, push):
        if push.target is None or push.target.kind != 'bookmark':
            push.refuse('cannot delete %s: git-cinnabar does not remove '
                        'Mercurial branches or heads (close the branch '
                        'with hg); only bookmarks can be deleted'
                        % push.dst)
        elif push.target.name not in self.state.bookmarks:
            push.refuse('there is no bookmark %s on the server'
                        % push.target.name)

    # 2. What to send.

    def _server_git_heads(self):
        """The commits of the server heads we have, and of our heads the
        server has: history the server has."""
        heads = list(self.state.heads)
        ours = discovery.local_heads(self.helper, set())
        heads += [h for h, known in zip(ours, self.peer.known(ours))
                  if known]
        heads = list(dict.fromkeys(heads))
        return [g for g in self.helper.hg2git_many(heads) if not g.is_null]

    def _find_commits(self, pushes):
        if not pushes:
            return
        self._exclude = self._server_git_heads()
        tips = list(dict.fromkeys(p.commit for p in pushes))
        self._hg_of.update(zip(tips, self.helper.git2hg_many(tips)))
        commits, self._roots = self._walk(tips)
        present = set(commits)
        for push in pushes:
            push.sending = push.commit in present
        self._walked = (frozenset(tips), commits)

    def _walk(self, tips):
        """([commits], [roots]): what the server lacks of the history of
        the `tips`, parents first, from one `git rev-list`, and those of
        them without parents."""
        # The order git-cinnabar sends them in: `git rev-list --topo-order
        # --reverse` of the pushed commits in the order git gave them.
        walk = git.rev_list_parents(tips, self._exclude)
        roots = [c for c, parents in walk if not parents]
        commits = [c for c, _ in walk]
        hg_ids = self.helper.git2hg_many(commits)
        self._note_history(tips, walk, hg_ids)
        del walk
        on_server = self._on_server(commits, hg_ids)
        del hg_ids
        if on_server:
            commits = [c for c in commits if c not in on_server]
            roots = [c for c in roots if c not in on_server]
        return commits, roots

    def _commits_of(self, pushes):
        """The commits to send for `pushes`, parents first."""
        tips = list(dict.fromkeys(p.commit for p in pushes))
        walked_tips, commits = self._walked
        if frozenset(tips) != walked_tips:
            commits, _ = self._walk(tips)
            self._walked = (frozenset(tips), commits)
        return commits

    def _note_history(self, tips, walk, hg_ids):
        """From the walk (parents first) and the changesets of its commits:
        the parents of the new commits, and which `tips` have a changeset
        we know in their history (a commit outside the walk is one the
        server has)."""
        walked = {c for c, _ in walk}
        related = set()
        self._new_parents = {}
        for (commit, parents), hg_id in zip(walk, hg_ids):
            if hg_id.is_null:
                self._new_parents[commit] = parents
            if not hg_id.is_null or any(
                    p not in walked or p in related for p in parents):
                related.add(commit)
        self._related = {t for t in tips if t in related or t not in walked}

    def _on_server(self, commits, hg_ids):
        """The commits whose changesets (`hg_ids`) the server has."""
        if not self.state.heads:
            return set()
        mapped = [(c, h) for c, h in zip(commits, hg_ids) if not h.is_null]
        answers = self.peer.known([h for _, h in mapped])
        return {c for (c, _), known in zip(mapped, answers) if known}

    # 3. Checks needing git only.

    def _check_without_branches(self, push):
        if self.state.heads and push.sending and \
                push.commit not in self._related and \
                not self._same_repository():
            push.refuse('cannot push to this repository without fetching '
                        'from it first: none of the history pushed came '
                        'from it (git push -f does not change that); '
                        'fetch, then rebase or merge onto what it has')
            return
        if not push.force and self.state.heads and push.sending and any(
                self.helper.is_ancestor_many(
                    [(r, push.commit) for r in self._roots])):
            push.refuse('would add a new root (a commit without parents) '
                        'to the repository; use git push -f to push it '
                        'anyway')
        if push.target.kind == 'bookmark':
            self._check_bookmark_move(push)
        elif push.target.kind == 'topic':
            self._check_topic_move(push)
        elif push.target.kind == 'branch' and not push.sending:
            self._check_branch_unchanged(push)

    def _same_repository(self):
        """Whether the server knows a root changeset of our metadata."""
        # The first parent of the metadata commit has the changeset heads
        # as parents.
        commits = git.root_commits('refs/cinnabar/metadata^')
        roots = [r for r in self.helper.git2hg_many(commits)
                 if not r.is_null]
        return bool(roots) and any(self.peer.known(roots))

    @staticmethod
    def _check_later(push, converted):
        """Whether to check `push` again once the changesets of what it
        sends are made (`converted`), rather than refuse it now for a
        server changeset we do not know: one of them may be it (a commit
        made as the server's changeset was, e.g. a `git cinnabar tag`
        commit as `hg tag` made it); noted in `push.recheck`."""
        if converted or not push.sending:
            return False
        push.recheck = True
        return True

    def _check_bookmark_move(self, push, converted=False):
        old = self.state.bookmarks.get(push.target.name)
        if old is None or push.force:
            return
        old_commit = self.helper.hg2git(old)
        if old_commit.is_null and self._check_later(push, converted):
            return
        if old_commit.is_null:
            push.refuse("the server's bookmark %s points to changes you do "
                        "not have; fetch first, or use git push -f"
                        % push.target.name)
        elif not self.helper.is_ancestor(old_commit, push.commit):
            push.refuse('moving bookmark %s is not a fast-forward; fetch '
                        'and merge first, or use git push -f'
                        % push.target.name)

    def _topic_heads(self, target):
        return dict(self.state.topics).get((target.name, target.topic), [])

    def _check_topic_move(self, push, converted=False):
        """A push to a topic whose server heads the commit does not
        descend from replaces them: with force only (then noted in
        `push.replaced`, for the obsolescence markers)."""
        name = topic_label(push.target)
        heads = self._topic_heads(push.target)
        if not push.sending:
            if self._hg_of[push.commit] not in heads:
                push.refuse('nothing to push: %s is already on the server '
                            'and is not the head of %s'
                            % (push.spec.src, name))
            return
        commits = self.helper.hg2git_many(heads)
        unknown = any(c.is_null for c in commits)
        if unknown and self._check_later(push, converted):
            return
        if unknown:
            push.refuse('the server has changes in %s that you do '
                        'not have; fetch first' % name)
            return
        kept = self.helper.is_ancestor_many([(c, push.commit)
                                             for c in commits])
        replaced = [c for c, k in zip(commits, kept) if not k]
        if replaced and not push.force:
            push.refuse('non-fast-forward: the pushed commit does not '
                        'descend from %s on the server; fetch and '
                        'rebase, or use git push -f to replace its '
                        'changesets (with obsolescence markers)' % name)
        push.replaced = replaced

    def _check_branch_unchanged(self, push):
        """A push that sends nothing changes nothing: refused, saying
        where the commit is, unless it is what the server lists for that
        ref (git then does not ask)."""
        node = self._hg_of[push.commit]
        heads = dict(self.state.branchmap).get(push.target.name, [])
        if node not in heads:
            push.refuse('nothing to push: %s is already on the server and '
                        'is not a head of branch %s'
                        % (push.spec.src, push.target.name))
            return
        listed = [name for name, hg_id
                  in refs.layout(self.state, self.styles).refs
                  if hg_id == node]
        if push.dst not in listed:
            push.refuse('nothing to push: %s is already a head of branch %s '
                        'on the server%s; %s is not a ref there'
                        % (push.spec.src, push.target.name,
                           ' (%s)' % ', '.join(listed) if listed else '',
                           push.dst))

    def _check_outside_layout(self, push):
        """A ref that is no branch, bookmark or topic of the layout (e.g.
        `refs/heads/HEAD` from pushing `refs/remotes/origin/*`): its
        commits went with the others, and nothing on the server names
        it. As git-cinnabar: it succeeds when the push sent changesets,
        else nothing changed."""
        if not self._sent:
            push.refuse('nothing changed on remote: %s is not a Mercurial '
                        'branch or bookmark in this layout, and the push '
                        'sent no changeset; push to %s'
                        % (push.dst, refs.push_examples(self.styles)))

    # 4. and 5. Making the bundle, checks needing branches, sending.

    def _send(self, pushes):
        push_format = self.peer.push_format()
        # The changegroup and bundle go to a directory named after this
        # process: what a killed push leaves there, the next removes.
        tmpfiles.remove_stale(None, SPOOL_PREFIX)
        while pushes:
            tmp = tmpfiles.private_dir(None, SPOOL_PREFIX)
            try:
                if self._send_from(pushes, push_format, tmp):
                    return
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            pushes = [p for p in pushes if p.error is None]

    def _send_from(self, pushes, push_format, tmp):
        """Make the bundle of `pushes` in `tmp`, check and deliver it;
        False when a check refused some, to try again without them."""
        try:
            bundle = self._make_bundle(pushes, push_format, tmp)
            self._check_branches(pushes)
        except Abort as error:
            self._refuse_all(pushes, error)
            return True
        if any(p.error is not None for p in pushes):
            self._drop_pending()
            return False
        self._deliver(pushes, push_format, bundle)
        return True

    def _make_bundle(self, pushes, push_format, tmp):
        commits = self._commits_of(pushes)
        changegroup = os.path.join(tmp, 'changegroup')
        mapping = self.helper.changegroup(push_format.cg_version,
                                          changegroup, commits,
                                          self._set_branches(pushes))
        self._hg_of.update((p.commit, mapping[p.commit]) for p in pushes
                           if p.commit in mapping)
        self._check_converted(pushes)
        markers = self._obsmarkers(pushes, push_format, commits, mapping)
        bundle = os.path.join(tmp, 'bundle')
        try:
            with open(changegroup, 'rb') as source, \
                    open(bundle, 'wb') as out:
                pushwire.write_bundle(out, push_format, source,
                                      self.state.heads, len(commits),
                                      markers)
        except OSError as error:
            # A full disk, an I/O error.
            raise Abort(describe_os_error(error, bundle))
        git_of = {hg: commit for commit, hg in mapping.items()}
        self._branch_of = {}
        self._pushed_heads = collections.defaultdict(list)
        for head in self.helper.bundle_heads(bundle):
            commit = head.git_id or git_of.get(head.hg_id)
            self._branch_of[head.hg_id] = head.branch
            self._pushed_heads[head.branch].append(commit)
        return bundle

    def _check_converted(self, pushes):
        """The checks put off until the changesets were made (now known
        to the helper, pending)."""
        for push in pushes:
            if not push.recheck:
                continue
            if push.target.kind == 'bookmark':
                self._check_bookmark_move(push, converted=True)
            else:
                self._check_topic_move(push, converted=True)

    def _set_branches(self, pushes):
        """{commit: branch or (branch, topic)} for the new commits a push
        to a topic leads to (through any parent, up to commits of
        changesets or of another such push), which then get that branch
        and topic, as `hg commit` under `hg topic <topic>` makes them;
        with the `branch` experiment (git-cinnabar's), the same with the
        branch of a push to a branch ref, instead of their first
        parent's."""
        set_branch = config.experiment('branch') and bool(
            {'heads', 'tips'} & set(self.styles))
        new = self._new_parents
        branches = {}
        for push in pushes:
            if push.target.kind == 'topic':
                value = (push.target.name, push.target.topic)
            elif push.target.kind == 'branch' and set_branch:
                value = push.target.name
            else:
                continue
            todo = [push.commit]
            while todo:
                commit = todo.pop()
                if commit in new and commit not in branches:
                    branches[commit] = value
                    todo.extend(new[commit])
        self._set = branches
        return branches or None

    # Obsolescence markers, for forced pushes to topics (cinnabar.topics).

    def _obsmarkers(self, pushes, push_format, commits, mapping):
        """The OBSMARKERS part's payload for the changesets that the
        forced pushes to topics replace, or None."""
        forced = [p for p in pushes if p.target.kind == 'topic' and p.force]
        if not forced:
            return None
        draft_roots = self._draft_roots()
        found = []
        for push in forced:
            found += self._topic_markers(push, commits, mapping,
                                         draft_roots)
        if not found:
            return None
        if not push_format.bundle2 or \
                obsmarkers.VERSION not in push_format.obsmarkers:
            self._warn_without_markers(forced)
            return None
        return obsmarkers.encode_part(found)

    def _warn_without_markers(self, forced):
        """A server that takes no markers of our format (one without the
        evolve extension, or with `experimental.evolution.exchange` off):
        the changesets go without them, as `hg push` sends them."""
        if self._warned_without_markers:
            return
        self._warned_without_markers = True
        sys.stderr.write(
            'warning: the Mercurial server at %s does not take obsolescence '
            'markers (format %d); pushing without them, as hg push does: '
            'the changesets replaced in %s stay there as other heads (prune '
            'them with hg, or enable the evolve extension on the server)\n'
            % (self.peer.description, obsmarkers.VERSION,
               ', '.join(topic_label(p.target) for p in forced)))
        sys.stderr.flush()

    def _topic_markers(self, push, commits, mapping, draft_roots):
        value = (push.target.name, push.target.topic)
        keep = self.helper.hg2git_many(
            dict(self.state.branchmap).get(push.target.name, []))
        keep = [c for c in keep if not c.is_null]
        old = topics.old_changesets(
            self.helper, push.replaced, push.commit, keep, draft_roots,
            push.target.topic) if push.replaced else []
        new = [c for c in commits if self._set.get(c) == value]
        published = topics.published_changesets(
            self.helper, push.replaced + keep, push.commit, draft_roots,
            push.target.topic)
        pairs = topics.pair([c for c, _, _ in old] +
                            [c for c, _ in published], new)
        rewritten = [h for c, h in published if pairs.get(c)]
        if rewritten:
            push.refuse('%s was made public on the server since you '
                        'fetched (%s): it cannot be replaced; '
                        'fetch, then rebase onto it'
                        % (', '.join(h[:12] for h in rewritten),
                           topic_label(push.target)))
            return []
        for commit, _ in published:
            pairs.pop(commit, None)
        hg_of = dict(mapping)
        hg_of.update((c, h) for c, h, _ in old)
        parents = {c: p for c, _, p in old}
        parents.update((c, self._new_parents.get(c, [])) for c in new)

        def describe(commit):
            return self._rewritten(commit, hg_of, parents[commit])
        return topics.markers(pairs, describe, _git_user())

    def _rewritten(self, commit, hg_of, parents):
        """The topics.Rewritten of `commit` (old or new), with `hg_of`
        {commit: HgId} and its `parents` (commits)."""
        unknown = [p for p in parents if p not in hg_of]
        hg_of.update(zip(unknown, self.helper.git2hg_many(unknown)))
        hg_id = hg_of[commit]
        return topics.Rewritten(
            hg_id, [hg_of[p] for p in parents],
            self.helper.data('changeset', hg_id).text,
            topics.diff_lines(commit))

    def _draft_roots(self):
        """The commits of the server's draft roots (`listkeys phases`: a
        changeset is a draft when it or an ancestor is one)."""
        phases = self.peer.listkeys('phases')
        if phases.get('publishing', '').lower() == 'true':
            return frozenset()
        roots = [HgId(k) for k, v in phases.items()
                 if k != 'publishing' and v == '1']
        return frozenset(c for c in self.helper.hg2git_many(roots)
                         if not c.is_null)

    def _check_branches(self, pushes):
        for push in pushes:
            branch = self._branch_of.get(self._hg_of[push.commit])
            if (push.target.kind in ('branch', 'topic')
                    and branch is not None
                    and branch != push.target.name):
                push.refuse('%s is on branch %s, not %s (new commits take '
                            'the branch of their first parent); push it '
                            'to %s' % (push.spec.src, branch,
                                       push.target.name,
                                       refs.branch_ref(branch, self.styles)))
        if not self.state.heads or any(p.error for p in pushes):
            # An empty server takes anything; after a refusal, the heads
            # are checked again without the refused pushes.
            return
        for branch, heads in self._pushed_heads.items():
            # Heads in a topic are not heads of the branch (hg-evolve).
            heads = [c for c in heads if not isinstance(
                self._set.get(c), tuple)]
            if heads:
                self._check_heads_of(branch, heads, pushes)

    def _check_heads_of(self, branch, pushed, pushes):
        """Refuse the pushes that would make `branch` new, or make it have
        more heads than on the server; `pushed` are the commits of the
        bundle's heads on that branch."""
        server = dict(self.state.branchmap).get(branch)
        if not server:
            message, offending = self._new_branch_problem(branch, pushes)
        else:
            bookmarked = {p.commit for p in pushes
                          if p.target.kind == 'bookmark'}
            new = [c for c in pushed if c not in bookmarked]
            message, offending = self._new_heads_problem(branch, server,
                                                         pushed, new)
        if message is None:
            return
        blamed = [p for p in pushes if any(self.helper.is_ancestor_many(
            [(c, p.commit) for c in offending]))]
        if any(p.force for p in blamed):
            return
        for push in blamed:
            push.refuse(message)

    def _new_branch_problem(self, branch, pushes):
        """(message or None, the offending heads). A new branch needs a
        force, as `hg push --new-branch`, even when a branch ref names it;
        a topic's branch does not (hg-evolve pushes new topics freely)."""
        heads = self._pushed_heads[branch]
        named = {p.target.kind for p in pushes
                 if p.target.kind in ('branch', 'topic')
                 and p.target.name == branch}
        if 'topic' in named:
            return None, []
        if named:
            return ('would create the new branch %s on the server; use git '
                    'push -f to create it' % branch, heads)
        return ('would create the new branch %s on the server; push to %s, '
                'or use git push -f'
                % (branch, refs.branch_ref(branch, self.styles)), heads)

    def _new_heads_problem(self, branch, server, pushed, new):
        """(message or None, the offending heads): those of the `new` heads
        that descend from no server head, or all of them when each does
        (but several from the same one)."""
        if not new:
            return None, []
        server_commits = self.helper.hg2git_many(server)
        if any(g.is_null for g in server_commits):
            return ('the server has changes on branch %s that you do not '
                    'have; fetch first, or use git push -f' % branch, new)
        pairs = [(g, c) for c in pushed for g in server_commits]
        replaced = {c: [] for c in pushed}
        for (g, c), descends in zip(pairs,
                                    self.helper.is_ancestor_many(pairs)):
            if descends:
                replaced[c].append(g)
        staying = [g for g in server_commits
                   if not any(g in r for r in replaced.values())]
        if len(staying) + len(new) <= len(server):
            return None, []
        offending = [c for c in new if not replaced[c]] or new
        return ('would create a new head on branch %s; fetch and merge '
                'first, or use git push -f' % branch, offending)

    def _show_remote_output(self, output, success):
        if success and self.quiet:
            return
        show_remote_output(output)

    def _deliver(self, pushes, push_format, bundle):
        if self.dry_run:
            self._sent = True
            if self.data == 'force':
                self.helper.finish()
            else:
                self._drop_pending()
            return
        try:
            result = self.peer.unbundle(bundle, push_format, self.state.heads)
        except Abort as error:
            self._refuse_all(pushes, error)
            return
        self._show_remote_output(result.output, result.ok)
        if result.ok:
            self._sent = True
            if self._keep_metadata():
                self._record(pushes)
            else:
                self._drop_pending()
            return
        self._drop_pending()
        if result.raced:
            message = RACED
        else:
            message = 'the server refused the push'
            if result.message:
                message += ': %s' % result.message
            if result.hint:
                message += ' (%s)' % result.hint
        for push in pushes:
            push.refuse(message + self._topic_hint(push))

    def _record(self, pushes):
        """Keep the metadata of what the server took. When that fails (a
        full disk), nothing of it is kept, and git must not take the refs
        as pushed: the next fetch brings the changesets back, as the
        very commits pushed (the conversion is the same both ways)."""
        try:
            self.helper.finish()
        except HelperError as error:
            for push in pushes:
                push.refuse('the server took the changesets, but recording '
                            'them here failed (%s); git fetch records them'
                            % error.message)

    def _topic_hint(self, push):
        """For a refused push to a branch of a server with topics (where
        Heptapod and `experimental.topic-mode.server=enforce` take only
        changesets in a topic): say how to push to a topic."""
        if self.peer.capable('topics') is None or \
                push.target.kind != 'branch':
            return ''
        return ('; this server works with topics: push to a topic, '
                'e.g. git push origin %s:%s'
                % (push.spec.src,
                   refs.topic_ref(push.target.name, '<topic>')))

    def _keep_metadata(self):
        """Whether to keep the metadata of what we pushed (see
        data_policy)."""
        policy = self.data
        if policy != 'phase':
            return policy in ('always', 'force')
        if self._set and any(isinstance(v, tuple) for v in self._set.values()):
            # Draft topics: a later force push needs to know them.
            return True
        if self.peer.capable('ext-topics-publish') in (b'all', b'auto'):
            # hg-evolve's topic extension: `all` on a publishing server,
            # `auto` with `topic.publish-bare-branch` (Heptapod), which
            # publishes what is pushed without a topic (and what pushes
            # to topics bring is kept above).
            return True
        try:
            phases = self.peer.listkeys('phases')
        except Abort:
            return True
        return phases.get('publishing', '').lower() == 'true' or \
            not phases

    def _refuse_all(self, pushes, error):
        self._drop_pending()
        for push in pushes:
            push.refuse(error.message)

    def _drop_pending(self):
        try:
            self.helper.abort()
        except HelperError:
            # A helper that went away kept nothing either.
            pass

    # 6. Bookmarks.

    def _set_bookmark(self, push):
        if self.dry_run:
            return
        name = push.target.name
        old = self.state.bookmarks.get(name)
        if push.commit is None:
            new = ''
        else:
            new = self._hg_of.get(push.commit) or \
                self.helper.git2hg(push.commit)
        if old == new:
            return
        try:
            success, output = self.peer.pushkey('bookmarks', name,
                                                old or '', new)
        except Abort as error:
            # Server hooks that refuse a bookmark (Heptapod's) fail the
            # whole pushkey command: their message stays in the server log.
            push.refuse('the server failed to %s bookmark %s: %s'
                        % ('delete' if push.commit is None else 'set', name,
                           error.message))
            return
        self._show_remote_output(output, success)
        if not success:
            push.refuse('the server refused to %s bookmark %s'
                        % ('delete' if push.commit is None else 'set', name))
