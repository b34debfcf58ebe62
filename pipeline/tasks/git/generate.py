"""Generated Learn Git Branching levels: a random start tree and a golden command sequence; the goal
tree is whatever real git makes of them (see ``replay``)."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass

from pipeline.tasks.common import cell_rng

BRANCH_NAMES = ["bugFix", "feature", "side", "hotfix", "topic", "release", "exp", "docs"]
KINDS = ("branch_commit", "merge", "rebase", "rebase_chain", "cherry_pick", "reset", "revert", "tag", "merge_both")
HASH_AGNOSTIC_KINDS = {"rebase", "rebase_chain", "cherry_pick"}


@dataclass
class Scenario:
    kind: str
    start: dict
    commands: list[str]
    flags: dict


def random_start_tree(rng: random.Random) -> tuple[dict, dict[str, list[str]]]:
    """main grows from C0; 1-3 side branches fork off main with 1-3 commits each.
    Returns the tree and, per branch, its own commits (not on main), oldest first."""
    commits = {"C0": {"parents": [], "id": "C0", "rootCommit": True}}
    n = 0

    def add(parent: str) -> str:
        nonlocal n
        n += 1
        cid = f"C{n}"
        commits[cid] = {"parents": [parent], "id": cid}
        return cid

    main = ["C0"]
    for _ in range(rng.randint(1, 2)):
        main.append(add(main[-1]))
    own: dict[str, list[str]] = {}
    names = rng.sample(BRANCH_NAMES, rng.randint(1, 3))
    for name in names:
        fork = rng.choice(main[1:])
        chain = [add(fork)]
        for _ in range(rng.randint(0, 2)):
            chain.append(add(chain[-1]))
        own[name] = chain
        if rng.random() < 0.5:
            main.append(add(main[-1]))
    branches = {"main": {"target": main[-1], "id": "main"}}
    for name, chain in own.items():
        branches[name] = {"target": chain[-1], "id": name}
    return {"branches": branches, "commits": commits, "HEAD": {"target": "main", "id": "HEAD"}}, own


def scenario(rng: random.Random, kind: str) -> Scenario:
    start, own = random_start_tree(rng)
    names = sorted(own)
    b = rng.choice(names)
    new_branch = rng.choice([n for n in BRANCH_NAMES if n not in own])
    if kind == "branch_commit":
        cmds = [f"git checkout -b {new_branch}"] + ["git commit"] * rng.randint(1, 3)
    elif kind == "merge":
        cmds = [f"git merge {b}"] if rng.random() < 0.5 else ["git commit", f"git merge {b}"]
    elif kind == "merge_both":
        cmds = [f"git checkout {b}", "git commit", "git checkout main", f"git merge {b}", f"git checkout {b}",
                "git merge main"]
    elif kind == "rebase":
        cmds = [f"git rebase main {b}"] if rng.random() < 0.5 else [f"git checkout {b}", "git rebase main"]
        if rng.random() < 0.5:
            cmds += ["git checkout main", f"git merge {b}"]
    elif kind == "rebase_chain":
        order = rng.sample(names, len(names))
        cmds, onto = [], "main"
        for name in order:
            cmds.append(f"git rebase {onto} {name}")
            onto = name
        cmds += ["git checkout main", f"git merge {onto}"]
    elif kind == "cherry_pick":
        picks = []
        for name in rng.sample(names, len(names)):
            picks += rng.sample(own[name], rng.randint(1, len(own[name])))
        picks = sorted(set(picks), key=lambda c: int(c[1:]))[:4]
        cmds = ["git cherry-pick " + " ".join(picks)]
    elif kind == "reset":
        steps = rng.randint(1, len(own[b]))
        cmds = [f"git checkout {b}", f"git reset HEAD~{steps}" if steps > 1 else "git reset HEAD^"]
    elif kind == "revert":
        cmds = [f"git checkout {b}", "git revert HEAD"]
    elif kind == "tag":
        target = rng.choice(own[b])
        cmds = [f"git tag v{rng.randint(1, 9)}.{rng.randint(0, 9)} {target}", f"git checkout {b}", "git commit"]
    else:
        raise ValueError(kind)
    flags = {"compareAllBranchesHashAgnostic": True} if kind in HASH_AGNOSTIC_KINDS else {}
    return Scenario(kind, start, cmds, flags)


MAX_DRAWS = 3000            # draws per kind; their distinct (start tree, commands) are the kind's space


def kind_draws(seed: int, kind: str, max_draws: int = MAX_DRAWS):
    """``((key,), scenario)`` for each of a kind's draws, from the kind's own seeded stream; the key is the
    start tree and the commands (two draws with the same key are the same level)."""

    rng = cell_rng(seed, "git", kind)
    for _ in range(max_draws):
        s = scenario(rng, kind)
        yield (json.dumps([s.start, s.commands, s.flags], sort_keys=True),), s


def generate(count: int, seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    return [scenario(rng, KINDS[i % len(KINDS)]) for i in range(count)]
