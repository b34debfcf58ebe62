"""Stage 1, crawl: pick the seed page and collect the pages reachable within the level's depth.

A page is reached through its links or, where it has none (the lead-only pages that make up most
of a snapshot), through the pages named with it (its text mentions them by title, or theirs
mentions it): a search bridge, as in AAR, where the agent looks the next page up by what it is
instead of clicking."""
from __future__ import annotations

import hashlib
from collections import defaultdict, deque
from dataclasses import dataclass
from operator import itemgetter

from pipeline.model import LEVELS, VARIANTS, Crawl, Leg
from pipeline.snapshot.language import in_language
from pipeline.snapshot.page import title_to_url
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.stages.facts import fact_parts, parts_for
from pipeline.stages.hops import titles_named

MIN_SEED_LINKS = 3          # an infobox page must lead somewhere by its links to start a leg
MAX_MENTIONS = 12           # search bridges kept per page (mentions in text order)


def mentions(page, ctx: StageContext) -> list[str]:
    """Other pages of the snapshot that the page's lead names by their exact title without linking
    to them, in order of first mention: where its links end, the route goes on by search."""
    linked = {l.title for l in page.links}
    return [t for t in titles_named(page.lead or "", ctx, MAX_MENTIONS + len(linked) + 1)
            if t != page.title and t not in linked][:MAX_MENTIONS]


@dataclass(frozen=True)
class _Profile:
    """What seeding and route spreading need of a page, read once per context for every level."""
    infobox: bool
    links: tuple[str, ...]                     # link targets inside the snapshot
    named: tuple[str, ...]                     # ``mentions``
    parts: dict[str, tuple[bool, bool]]        # fact part -> (has a fact, has a place or country fact)

    def has_facts(self, modes: tuple[str, ...]) -> bool:
        return any(self.parts[p][0] for p in parts_for(modes))

    def forkable(self, modes: tuple[str, ...]) -> bool:
        return any(self.parts[p][1] for p in parts_for(modes))


def _profiles(ctx: StageContext) -> dict[str, _Profile]:
    """Every page of the snapshot's language, profiled in one pass (each page read and its facts
    found once, not once per level and variant)."""
    def compute() -> dict[str, _Profile]:
        out = {}
        for title in ctx.store.titles():
            page = ctx.page(title)
            if page is not None and in_language(page, ctx.store.language):
                out[title] = profile_of(page, ctx)
        return out
    return ctx.derived("page_profiles", compute)


def profile_of(page, ctx: StageContext) -> _Profile:
    """One page's profile: whether it has an infobox, its links and mentions inside the snapshot, and
    per part (infobox, prose, ...) whether it offers a fact and a place or a country to fork."""
    parts = {part: (bool(facts), any(f.role in ("place", "country") for f in facts))
             for part, facts in fact_parts(page).items()}
    return _Profile(bool(page.infobox), tuple(l.title for l in page.links if l.in_snapshot),
                    tuple(mentions(page, ctx)), parts)


def whole_world(ctx: StageContext) -> bool:
    """Is the world small enough to profile whole, once, and keep (the embedded snapshot: 10,253 pages
    in seconds)? A larger one (``generation.whole_world_pages``; a whole Wikipedia has 6.9 million) is
    profiled a page at a time as legs meet it (``profile``) and seeded by draws (``drawn_seed``)."""
    return len(ctx.store) <= int(ctx.generation.get("whole_world_pages", 50_000))


def profile(title: str, ctx: StageContext) -> _Profile | None:
    """One page's profile (None: missing, malformed or in another language): from the whole world's
    profiles where the world is small, else computed when first asked and kept on disk per page."""
    if whole_world(ctx):
        return _profiles(ctx).get(title)

    def compute() -> _Profile | None:
        page = ctx.page(title)
        return profile_of(page, ctx) if page is not None and in_language(page, ctx.store.language) else None
    return ctx.kept("profile", title, compute)


def mentioned_by(title: str, ctx: StageContext) -> list[str]:
    """The pages whose lead names ``title`` without linking to it (``mentions`` the other way round):
    a search bridge too, since the agent finds the next page by what it is, not by the relation. A hub
    (United States, France) is named by hundreds of pages, so routes that reach one fan out again
    instead of all going on to the few pages its own lead names. None in a world too large to profile
    whole: there a route goes on by the page's own links and names."""
    if not whole_world(ctx):
        return []

    def compute() -> dict[str, list[str]]:
        index: dict[str, list[str]] = defaultdict(list)
        for source, profile in _profiles(ctx).items():
            for target in profile.named:
                index[target].append(source)
        return dict(index)
    return ctx.derived("mentioned_by", compute).get(title, [])


def bridge_degree(title: str, ctx: StageContext) -> int:
    """How many ways a route can arrive at the page: pages linking to it, pages naming it, and pages
    it names (which reach it by the reverse bridge). A page whose lead names a dozen hubs ("Afghan
    conflict") sits in the crawl of every leg that passes one, so routes draw it seldom. In a world too
    large to profile whole, how many pages' text names it (``mention_count``, one indexed query)."""
    if not whole_world(ctx):
        return ctx.kept("mention_count", title, lambda: ctx.store.mention_count(title))   # on disk: a phrase count over every text

    def compute() -> dict[str, int]:
        degree: dict[str, int] = defaultdict(int)
        for source, profile in _profiles(ctx).items():
            for target in set(profile.links) | set(profile.named):
                degree[target] += 1
            degree[source] += len(profile.named)
        return dict(degree)
    return ctx.derived("bridge_degree", compute).get(title, 0)


def seed_candidates(ctx: StageContext, modes: tuple[str, ...] = ("infobox",)) -> list[str]:
    """Pages that make good seeds at a level's extraction ``modes``: an infobox page with usable
    facts and several links inside the snapshot, or any other page (most are lead-only) with a fact
    of its own at those modes and a page it links to or mentions to go on to."""
    modes = tuple(sorted(modes))

    def compute() -> list[str]:
        profiles = _profiles(ctx)
        usable = {t for t, p in profiles.items() if p.has_facts(modes)}
        out = []
        for title in sorted(usable):
            profile = profiles[title]
            if profile.infobox:
                if len(profile.links) >= MIN_SEED_LINKS and profile.parts["infobox"][0]:
                    out.append(title)
            elif ctx.generation.get("search_bridges") and any(t in usable for t in profile.links + profile.named):
                out.append(title)
        return out
    bridges = "bridges" if ctx.generation.get("search_bridges") else "links"
    return ctx.derived(f"seed_candidates-{'+'.join(modes)}-{bridges}", compute)   # a second a process


def run_pool(ctx: StageContext, level: str, variant: str) -> list[str]:
    """The seeds a run of the level and variant may start from: ``seed_candidates`` at the level's
    extraction modes; for a DAG leg, which forks a place or a country, those where one is at hand."""
    extraction = ctx.presets[level].extraction
    candidates = seed_candidates(ctx, extraction)
    if variant != "dag":
        return candidates
    bridges = "bridges" if ctx.generation.get("search_bridges") else "links"
    forkable = ctx.derived(f"seed_candidates_dag-{'+'.join(sorted(extraction))}-{bridges}",
                           lambda: [t for t in candidates if _profiles(ctx)[t].forkable(extraction)])
    return forkable or candidates


SMALLER_POOL = 0.9        # a pool under 90% of a run's own is one whose seeds the run leaves for last
SLOT_STRIDE = 1_000_003   # flows.generate.new_leg: leg.seed = run seed * SLOT_STRIDE + slot


_RUNS = [(level, variant) for level in LEVELS for variant in VARIANTS]


def seed_hash(title: str, run_seed: int) -> str:
    """A page's place in the seed order of a run seed: the same in every run of that seed."""
    return hashlib.sha256(f"seed-order|{run_seed}|{title}".encode()).hexdigest()


def draft_seeds(pools: dict[tuple[str, str], list[str]], run_seed: int) -> dict[tuple[str, str], list[str]]:
    """Deal every page of the pools to exactly one run, the runs taking turns (smallest pool first),
    each taking the next page of its pool in the run seed's hash order that no run has taken yet.
    A run takes the pages that a run with a clearly smaller pool can start from (under
    ``SMALLER_POOL`` of its own) only once it has no others: easy legs start only from infobox pages
    (about 600), DAG legs from pages with a place or a country (about 2,100 of the 3,300 other legs
    may start from). Taking turns keeps two runs over one small pool (easy linear and easy DAG)
    from walking it in the same order: before this, 121 of their 350 seeds were the same pages."""
    order = {t: seed_hash(t, run_seed) for t in set().union(*pools.values())}   # each page hashed once
    prefs = {}
    for run, pool in pools.items():
        smaller = {t for other in pools.values() if len(other) < SMALLER_POOL * len(pool) for t in other}
        prefs[run] = iter(sorted(pool, key=lambda t: (t in smaller, order[t])))
    taken: set[str] = set()
    picks: dict[tuple[str, str], list[str]] = {run: [] for run in pools}
    turns = sorted(pools, key=lambda run: (len(pools[run]), _RUNS.index(run) if run in _RUNS else -1))
    while turns:
        for run in list(turns):
            page = next((t for t in prefs[run] if t not in taken), None)
            if page is None:
                turns.remove(run)
            else:
                taken.add(page)
                picks[run].append(page)
    return picks


def spread_seed(leg: Leg, candidates: list[str], ctx: StageContext) -> str | None:
    """Seeds spread over the pool instead of drawn independently (one seed used to start 11 of 25
    legs): the run's slots walk one seeded order of the pool, slot i's attempt a taking its
    (i + a * slots)-th page, so no two attempts of a run share a seed until the pool is used up, and
    past that no seed starts more than ceil(slots / pool) + 1 of the run's legs.

    The runs of one run seed (a release: every level and variant) spread over the pool together:
    every run deals the pages of all eight runs' pools the same way (``draft_seeds``) and walks its
    own deal first, then the pages dealt to other runs, those dealt last first (the seeds their
    runs reach last, if ever). None for a leg made outside a run (no slot), which draws its seed
    at random."""
    slot, attempt, slots = (leg.metadata.get(k) for k in ("slot", "attempt", "slots"))
    if slot is None or attempt is None or not slots:
        return None
    run_seed, mine = leg.seed // SLOT_STRIDE, (leg.level, leg.variant)

    def order() -> list[str]:
        pools = {run: run_pool(ctx, *run) for run in _RUNS if run[0] in ctx.presets}
        pools[mine] = candidates
        picks = draft_seeds(pools, run_seed)
        dealt = {t: (run, turn) for run, pages in picks.items() for turn, t in enumerate(pages)}
        return sorted(candidates, key=lambda t: (dealt[t][0] != mine,
                                                 dealt[t][1] if dealt[t][0] == mine else -dealt[t][1], t))
    pool = ctx.memo(f"seed_order|{run_seed}|{leg.level}|{leg.variant}|{len(candidates)}", order)
    # an attempt past the end of the pool wraps onto seeds the run may have accepted already: it
    # passes over those at the bound (ceil(slots / pool) + 1 uses), so no seed goes past it
    bound = leg.metadata["seed_bound"] = -(-slots // len(pool)) + 1   # the driver holds accepted legs to it
    full = {t for t, n in leg.metadata.get("reused_seeds", {}).items() if n >= bound}
    start = slot + attempt * slots
    for k in range(len(pool)):
        if pool[(start + k) % len(pool)] not in full:
            return pool[(start + k) % len(pool)]
    return pool[start % len(pool)]


SEED_DRAWS = 400   # pages drawn at most for one attempt's seed in a world too large to list its seeds


def good_seed(title: str, ctx: StageContext, modes: tuple[str, ...], dag: bool) -> bool:
    """``seed_candidates``' rule for one page, read from profiles (what a drawn seed must pass)."""
    mine = profile(title, ctx)
    if mine is None or not mine.has_facts(modes) or (dag and not mine.forkable(modes)):
        return False
    if mine.infobox:
        return len(mine.links) >= MIN_SEED_LINKS and mine.parts["infobox"][0]
    return bool(ctx.generation.get("search_bridges")) and any(
        (p := profile(t, ctx)) is not None and p.has_facts(modes) for t in mine.links + mine.named)


def drawn_seed(leg: Leg, ctx: StageContext) -> str:
    """A seed for a world too large to list its seeds: pages drawn at random (by row, seeded by the leg
    and the attempt) until one passes ``good_seed``; each draw reads one page. With millions of pages two
    of a release's 1,400 legs share a seed seldom (about once in 1,400 x 1,400 / 2 / pool), and never a
    seed the run has already used to its bound (``reused_seeds``)."""
    modes = tuple(sorted(ctx.presets[leg.level].extraction))
    rng = rng_for(leg, "crawl-seed")
    last = ctx.store.last_row()
    used = set(leg.metadata.get("reused_seeds", {}))
    for _ in range(SEED_DRAWS):
        title = ctx.store.title_at(rng.randint(1, last))
        if title is not None and title not in used and good_seed(title, ctx, modes, leg.variant == "dag"):
            return title
    raise Rejected(f"crawl: no page of {SEED_DRAWS} drawn at random is usable as a seed")


def run(leg: Leg, ctx: StageContext) -> Leg:
    preset = ctx.presets[leg.level]
    rng = rng_for(leg, "crawl")
    if leg.seed_title or not whole_world(ctx):
        seed = leg.seed_title or drawn_seed(leg, ctx)
    else:
        candidates = run_pool(ctx, leg.level, leg.variant)
        if not candidates:
            raise Rejected("crawl: the snapshot has no page usable as a seed")
        seed = spread_seed(leg, candidates, ctx) or candidates[rng.randrange(len(candidates))]
    page = ctx.page(seed)
    if page is None:
        bad = ctx.bad_pages.get(seed)
        raise Rejected(f"crawl: seed page {seed!r} " + (f"is malformed ({bad})" if bad else "not in the snapshot"))
    if not in_language(page, ctx.store.language):
        raise Rejected(f"crawl: seed page {seed!r} is in another language ({page.language}) than the snapshot "
                       f"({ctx.store.language})")
    leg.seed_title, leg.seed_url = page.title, page.url
    limit = int(ctx.generation["max_crawl_pages"])
    depth_of = {page.title: 0}
    edges: dict[str, list[str]] = {}
    bridges: dict[str, list[str]] = {}
    queue = deque([page.title])
    skipped: dict[str, str] = {}
    while queue:
        title = queue.popleft()
        known = profile(title, ctx)   # a profiled page's links without reading the page again
        if known is not None:
            targets = sorted(set(known.links) - {title})
        else:   # not profiled: missing, malformed or in another language, as a read of it says
            current = ctx.page(title)
            if current is None:  # malformed or missing: the crawl goes around it and says so
                depth_of.pop(title, None)
                bad = ctx.bad_pages.get(title)
                skipped[title] = f"malformed: {bad}" if bad else "not in the snapshot"
                continue
            if not in_language(current, ctx.store.language):   # never a route page of this snapshot's legs
                depth_of.pop(title, None)
                skipped[title] = f"in another language ({current.language})"
                continue
            targets = sorted({l.title for l in current.links if l.in_snapshot and l.title != title})
        edges[title] = targets
        if ctx.generation.get("search_bridges"):
            named = list(known.named)   # ``mentions``, found once per page and context
            named_set = set(named)       # a hub is named by thousands of pages: membership by hash
            naming = [t for t in mentioned_by(title, ctx) if t not in named_set and t != page.title]
            bridges[title] = named + rng.sample(naming, min(2 * MAX_MENTIONS, len(naming)))
        else:
            bridges[title] = []
        if depth_of[title] >= preset.crawl_depth:
            continue
        for target in targets + bridges[title]:
            if target not in depth_of and target not in skipped and len(depth_of) < limit:
                depth_of[target] = depth_of[title] + 1
                queue.append(target)
    if len(depth_of) < 2:
        raise Rejected(f"crawl: seed {page.title!r} reaches no other page")
    leg.crawl = Crawl(pages=sorted(depth_of.items(), key=itemgetter(1, 0)),
                      edges={t: [x for x in v if x in depth_of] for t, v in sorted(edges.items())},
                      mentions={t: [x for x in v if x in depth_of] for t, v in sorted(bridges.items()) if v},
                      seed_url=title_to_url(page.title), skipped_pages=dict(sorted(skipped.items())))
    return leg
