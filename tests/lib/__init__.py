"""Helpers shared by the end-to-end tests and the benchmarks.

Everything here drives real programs: `git`, `hg`, `hg serve`.  Nothing
is mocked.  The modules are:

- `env`: where things are (repo root, corpus, hg) and the isolated
  environment every child process runs in;
- `proc`: running a program in its own process group, with a timeout that
  kills the whole group;
- `corpus`: the shared corpus of Mercurial bundles and their expected ids;
- `hg`: Mercurial repositories and `hg serve` over HTTP (on port 0, the
  port read back from the server), and `closed_port` (connections refused);
- `git`: git repositories, clones through git-cinnabar, and reading the
  metadata git-cinnabar keeps;
- `proxy`: an HTTP proxy in front of `hg serve` that can cut a response;
- `sources`: a corpus repository over one transport (http, ssh, local
  path, bundle file), as a git URL;
- `checks`: the assertions the tests share (expected ids, clean failures
  saying the expected error);
- `tree`: file trees of a changeset per `hg archive` and `git archive`;
- `push`: pushing through git-cinnabar to an hg repository the test owns,
  and the checks around it (what hg shows of a changeset, the server's
  state before and after, refusals, fresh clones, fetches after a push).
- `bundleserver`: a static file server in its own process (bundles,
  helpers, releases) with ranges, If-Range, an access log, and transfers
  it can cut after N bytes, over http or https;
- `bundlefmt`: the one format library of bundles and changegroups
  (bundle1, bundle2 parts, changegroup versions 01-03, deltas, revision
  ids), read and written loosely; the fuzzer's too;
- `hgcraft`: Mercurial revisions built by hand with valid ids (what hg
  itself refuses to make) written as HG10UN or HG20 bundles;
- `crafted`: linear histories whose manifests or ids are made wrong on
  purpose, written as HG10UN bundles;
- `gitobj`: git trees written as loose objects, for names git refuses;
- `oddpaths`: directory names a helper command line must quote, and the
  decoys where a path cut at its first space would end;
- `hostile`: checks after hostile input (no signal death, no temporary
  pack left, `git fsck --strict`);
- `hostile_http`: two origins on 127.0.0.1 in front of `hg serve` that ask for
  credentials (401 with a body), redirect, cut answers or never end them,
  recording which origin got which Authorization header;
- `tls`: a self-signed certificate for 127.0.0.1 (openssl);
- `githttp`: git's smart HTTP (`git http-backend`) on 127.0.0.1, in its own
  process;
- `signing`: a release key made for the test session (Ed25519);
- `randhist`: random git histories made to hurt a conversion (names
  sorting next to directories, swaps, modes, renames, merges), written with
  `git fast-import`;
- `hgreplay`: the same history made with hg's own commands (`hg commit`),
  told the copies git finds (`git.git_copies`, as git-cinnabar 0.7.5 asks);
- `hgcmdserver`: a client of hg's command server, to run many hg commands
  in one process;
- `chg`: the command servers, for one session, through which the `hg`
  fixture runs its commands with Mercurial's chg (CINNABAR_TEST_CHG);
- `crashsweep`: a command killed or failed (strace fault injection) at
  each of its write-like system calls in turn, and the checks of what that
  leaves (`make crash-sweep`, `hostile/test_write_fault_sweep.py`);
- `hgdump`: an hg extension printing changesets, manifests and filelogs as
  JSON, as Mercurial reads them;
- `push_oracle`: a random history pushed in steps and compared with its
  replay; also `make fuzz-push` (`python -m lib.push_oracle`);
- `push_oracle_cases`: small hand-made histories through the same
  comparison, reproducing what it found.
- `vectors`: expected values made with git-cinnabar 0.7.5 (tests/vectors/),
  and the random histories of push-copies.tsv;
- `releases`: release manifests and helpers written by hand (the layout
  of cinnabar/release.py), for download and self-update.
"""
