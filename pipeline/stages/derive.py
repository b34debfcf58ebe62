"""A large world's per-page derived data, computed ahead of generation (issue 33, items 7 and 8).

In a world too large to profile whole (``crawl.whole_world``) a page's profile, its hops and the facts
each level may ask of it are computed when a leg first meets the page and kept on disk per page
(``StageContext.kept``). In a world of a million pages nearly every page a release meets is new, so
a release paid for them: 606 s for 1,400 legs at 100,000 pages against 51 s in the embedded world.
``derive_rows`` computes the same kept values for a range of page rows, so that after ``python -m
flows.derive`` (shards side by side, in worker processes or on Dask) a release only reads them: the
same values, whoever computed them first (a leg's bytes do not change), the one-off cost stated apart.
"""
from __future__ import annotations

from pipeline.stages.base import StageContext
from pipeline.stages.build import has_usable_facts, offers_entity, usable_facts
from pipeline.stages.crawl import profile
from pipeline.stages.facts import hop_modes
from pipeline.stages.hops import hops_from


def level_modes(ctx: StageContext) -> list[tuple[str, ...]]:
    """Every set of extraction modes a leg asks a page's usable facts at: each level's own (a seed, a
    route page of that level) and a hop's (``hop_modes``: a page reached by a hop)."""
    found = set()
    for preset in ctx.presets.values():
        modes = tuple(sorted(preset.extraction))
        found |= {modes, hop_modes(modes)}
    return sorted(found)


def derive_page(title: str, ctx: StageContext, modes: list[tuple[str, ...]]) -> bool:
    """Compute and keep what plan and build read of one page (a walk asks a page's hops even where it
    has no profile: those are kept too); False where the page gives no profile (missing, malformed or in
    another language)."""
    profiled = profile(title, ctx) is not None
    hops_from(title, ctx)   # keeps the page's choice hops too (``page_choice_hops``)
    if profiled:
        for m in modes:
            usable_facts(title, ctx, m)
            has_usable_facts(title, ctx, m)
            offers_entity(title, ctx, m)
    return profiled


def derive_rows(ctx: StageContext, first: int, last: int, progress=None) -> dict[str, int]:
    """``derive_page`` for every page in rows ``first`` .. ``last``; ``progress(n)`` after each page.
    Returns how many pages were read and how many give a profile."""
    modes = level_modes(ctx)
    pages = usable = 0
    for title in ctx.store.titles_in_rows(first, last):
        usable += derive_page(title, ctx, modes)
        pages += 1
        if progress is not None:
            progress(1)
    return {"pages": pages, "profiled": usable}
