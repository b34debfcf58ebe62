"""Replay Learn Git Branching commands with real ``git`` and read the graph back as an LGB tree.

Setup: every LGB commit ``Ck`` becomes a real commit whose message is ``Ck`` and whose tree holds one
file ``Ck.txt`` per ancestor (so merges, rebases and cherry-picks never conflict); author, committer
and dates are fixed, so the same LGB commit has the same hash in the local and the origin repository.
Branches ``o/<name>`` of a local tree are the remote-tracking refs ``origin/<name>``.

Reading back: real commits are mapped to LGB ids by message. A new commit whose message is an id
not used yet is that id (``git commit`` and merge commits get the next free ``C<n>`` as message);
a commit whose message is an existing id is a copy (rebase, cherry-pick) and gets the next unused
primed id (``C3'``, ``C3''``...), as LGB names copies; ``git revert`` of ``Ck`` likewise.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

from pipeline.tasks.git.trees import next_alt_id, parse_tree

_ENV = {
    "GIT_AUTHOR_NAME": "Legwork", "GIT_AUTHOR_EMAIL": "legwork@example.invalid",
    "GIT_COMMITTER_NAME": "Legwork", "GIT_COMMITTER_EMAIL": "legwork@example.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000", "GIT_COMMITTER_DATE": "1700000000 +0000",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_EDITOR": "true", "GIT_SEQUENCE_EDITOR": "true", "GIT_MERGE_AUTOEDIT": "no",
    "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
}
SUPPORTED = ("commit", "branch", "checkout", "switch", "merge", "rebase", "cherry-pick", "reset", "revert",
             "tag", "fetch")
_REF = re.compile(r"^(C\d+(?:'\^\d+|'{1,3})?)([~^].*)?$")


class GitCommandError(RuntimeError):
    """A command could not be replayed (unsupported, or git refused it)."""


def split_commands(solution: str) -> list[str]:
    return [c.strip() for c in re.split(r";|&&|\n", solution) if c.strip()]


def _numeric(cid: str) -> int:
    return int(re.match(r"C(\d+)", cid).group(1))


def _topological(commits: dict) -> list[str]:
    order, done = [], set()

    def visit(cid: str):
        if cid in done:
            return
        for p in commits[cid].get("parents", []):
            visit(p)
        done.add(cid)
        order.append(cid)
    for cid in sorted(commits, key=lambda c: (_numeric(c), c)):
        visit(cid)
    return order


class Repo:
    """One real repository driven by LGB commands (with its origin, if the tree has one)."""

    def __init__(self, start_tree: dict | str, workdir: Path):
        tree = parse_tree(start_tree)
        self.workdir = Path(workdir)
        self.env = dict(os.environ, HOME=str(self.workdir), **_ENV)
        self.sha_to_id: dict[str, str] = {}
        self.id_to_sha: dict[str, str] = {}
        self.parents: dict[str, list[str]] = {}
        self.path = self.workdir / "local"
        self.origin = self.workdir / "origin" if tree.get("originTree") else None
        if self.origin:
            self._materialise(tree["originTree"], self.origin)
        self._materialise(tree, self.path)
        if self.origin:
            self.git("remote", "add", "origin", str(self.origin))
        self._checkout_head(tree, self.path)

    # ---------------------------------------------------------------- plumbing
    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.path, env=self.env, check=False, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60)
        if check and done.returncode != 0:
            raise GitCommandError(f"git {' '.join(args)}: {(done.stderr or done.stdout).strip()[:300]}")
        return done.stdout

    def _materialise(self, tree: dict, path: Path) -> None:
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main", cwd=path)
        commits = tree["commits"]
        for cid in _topological(commits):
            if cid in self.id_to_sha:
                sha = self.id_to_sha[cid]
                if not self.git("cat-file", "-t", sha, cwd=path, check=False).strip():
                    sha = self._write_commit(cid, commits, path)
                continue
            sha = self._write_commit(cid, commits, path)
            self._remember(sha, cid, commits[cid].get("parents", []))
        for name, b in tree["branches"].items():
            ref = f"refs/remotes/origin/{name[2:]}" if name.startswith("o/") else f"refs/heads/{name}"
            self.git("update-ref", ref, self.id_to_sha[b["target"]], cwd=path)
        for name, t in (tree.get("tags") or {}).items():
            self.git("update-ref", f"refs/tags/{name}", self.id_to_sha[t["target"]], cwd=path)
        if path != self.path:
            self._checkout_head(tree, path)

    def _write_commit(self, cid: str, commits: dict, path: Path) -> str:
        ancestors, stack = set(), [cid]
        while stack:
            c = stack.pop()
            if c not in ancestors:
                ancestors.add(c)
                stack.extend(commits[c].get("parents", []))
        entries = []
        for a in sorted(ancestors):
            blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=path, env=self.env, input=f"{a}\n",
                                  capture_output=True, text=True, check=True).stdout.strip()
            entries.append(f"100644 blob {blob}\t{a}.txt\n")
        tree_sha = subprocess.run(["git", "mktree"], cwd=path, env=self.env, input="".join(entries),
                                  capture_output=True, text=True, check=True).stdout.strip()
        args = ["commit-tree", tree_sha, "-m", cid]
        for p in commits[cid].get("parents", []):
            args += ["-p", self.id_to_sha[p]]
        return self.git(*args, cwd=path).strip()

    def _checkout_head(self, tree: dict, path: Path) -> None:
        target = tree["HEAD"]["target"]
        if target in tree["branches"]:
            self.git("symbolic-ref", "HEAD", f"refs/heads/{target}", cwd=path)
        else:
            self.git("update-ref", "--no-deref", "HEAD", self.id_to_sha[target], cwd=path)
        self.git("reset", "-q", "--hard", cwd=path)

    def _remember(self, sha: str, cid: str, parents: list[str]) -> None:
        self.sha_to_id[sha], self.id_to_sha[cid], self.parents[cid] = cid, sha, list(parents)

    def next_id(self) -> str:
        return f"C{max(_numeric(c) for c in self.id_to_sha) + 1}"

    def _ref(self, token: str) -> str:
        if token.startswith("o/"):
            return "origin/" + token[2:]
        m = _REF.match(token)
        if m and m.group(1) in self.id_to_sha:
            return self.id_to_sha[m.group(1)] + (m.group(2) or "")
        return token

    # ---------------------------------------------------------------- commands
    def run(self, command: str) -> None:
        """Replay one LGB command, e.g. ``git rebase main bugFix`` or ``git cherry-pick C3 C4``."""
        words = shlex.split(command)
        if len(words) < 2 or words[0] != "git" or words[1] not in SUPPORTED:
            raise GitCommandError(f"unsupported command: {command!r}")
        verb, rest = words[1], words[2:]
        if verb == "commit":
            cid = self.next_id()
            (self.path / f"{cid}.txt").write_text(f"{cid}\n")
            self.git("add", f"{cid}.txt")
            self.git("commit", "-q", "-m", cid)
        elif verb == "merge":
            self.git("merge", "-q", "--no-edit", "-m", self.next_id(), *[self._ref(w) for w in rest])
        elif verb == "reset":
            refs = [w for w in rest if not w.startswith("-")]
            self.git("reset", "-q", "--hard", *[self._ref(w) for w in refs])
        elif verb == "revert":
            self.git("revert", "--no-edit", *[self._ref(w) for w in rest])
        elif verb == "fetch":
            if not self.origin:
                raise GitCommandError("git fetch without an origin")
            self.git("fetch", "-q", "origin")
        elif verb == "cherry-pick":
            self.git("cherry-pick", *[self._ref(w) for w in rest])
        elif verb == "rebase":
            self.git("rebase", "-q", *[self._ref(w) for w in rest])
        else:  # branch, checkout, switch, tag: flags pass through, refs are translated
            self.git(verb, *(["-q"] if verb in ("checkout", "switch") else []), *[self._ref(w) for w in rest])
        self._sync()

    def _sync(self) -> None:
        """Give LGB ids to commits that appeared since the last command (parents first)."""
        out = self.git("log", "--all", "--reflog", "HEAD", "--topo-order", "--reverse", "-z", "--format=%H%x01%P%x01%s%x01%b")
        for record in filter(None, out.split("\0")):
            sha, parents, subject, body = (record.split("\x01") + ["", "", ""])[:4]
            sha = sha.strip()
            if sha in self.sha_to_id:
                continue
            parent_ids = [self.sha_to_id[p] for p in parents.split()]
            revert = re.match(r'^Revert "(.*)"$', subject)
            if revert:
                source = re.search(r"This reverts commit ([0-9a-f]{40})", body)
                base = self.sha_to_id[source.group(1)] if source else revert.group(1)
            elif re.match(r"^C\d+$", subject):
                base = subject
                if base not in self.id_to_sha:
                    self._remember(sha, base, parent_ids)
                    continue
            else:
                raise GitCommandError(f"cannot name commit {sha[:10]} ({subject!r})")
            cid = next_alt_id(base)
            while cid in self.id_to_sha:
                cid = next_alt_id(cid)
            self._remember(sha, cid, parent_ids)

    # ---------------------------------------------------------------- reading back
    def _read(self, path: Path, with_remotes: bool) -> dict:
        branches, tags = {}, {}
        refs = self.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/remotes", "refs/tags",
                        cwd=path)
        for line in refs.splitlines():
            ref, sha = line.split()
            if ref.startswith("refs/heads/"):
                name = ref[len("refs/heads/"):]
                branches[name] = {"target": self.sha_to_id[sha], "id": name}
            elif ref.startswith("refs/remotes/origin/") and with_remotes and not ref.endswith("/HEAD"):
                name = "o/" + ref[len("refs/remotes/origin/"):]
                branches[name] = {"target": self.sha_to_id[sha], "id": name}
            elif ref.startswith("refs/tags/"):
                name = ref[len("refs/tags/"):]
                tags[name] = {"target": self.sha_to_id[sha], "id": name}
        symbolic = self.git("symbolic-ref", "-q", "HEAD", cwd=path, check=False).strip()
        head = symbolic[len("refs/heads/"):] if symbolic else self.sha_to_id[self.git("rev-parse", "HEAD", cwd=path).strip()]
        # like LGB, commits left behind (rebased originals, reset-away commits) stay in the tree: the
        # reflog still reaches them
        reachable = set(self.git("rev-list", "--all", "--reflog", "HEAD", cwd=path).split())
        commits = {}
        for sha in sorted(reachable):
            cid = self.sha_to_id[sha]
            commits[cid] = {"parents": list(self.parents[cid]), "id": cid}
            if not self.parents[cid]:
                commits[cid]["rootCommit"] = True
        tree = {"branches": branches, "commits": commits, "HEAD": {"target": head, "id": "HEAD"}}
        if tags:
            tree["tags"] = tags
        return tree

    def tree(self) -> dict:
        tree = self._read(self.path, with_remotes=True)
        if self.origin:
            tree["originTree"] = self._read(self.origin, with_remotes=False)
        return tree


def replay(start_tree: dict | str, commands: list[str] | str) -> tuple[dict, list[dict]]:
    """The tree after running ``commands`` from ``start_tree`` with real git, and the tree after each."""
    if isinstance(commands, str):
        commands = split_commands(commands)
    with tempfile.TemporaryDirectory(prefix="legwork-git-") as tmp:
        repo = Repo(start_tree, Path(tmp))
        repo._sync()
        steps = []
        for command in commands:
            repo.run(command)
            steps.append({"command": command, "tree": repo.tree()})
        return repo.tree(), steps
