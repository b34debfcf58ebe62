"""Stage 3, build: concrete stops. Page stops get a fact read from their page; roadblocks are
instantiated from templates with arguments referencing earlier stops; detours pick a
transform for an earlier value; a finish line closes the leg (its expression is composed by
pre-validation, once the surviving stops are known).

The build makes a few spare roadblocks and detours: pre-validation dry-runs every chain,
drops what fails and trims to the planned counts.
"""
from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from pipeline import refs
from pipeline.catalog import diamond_only_templates, roadblock_templates
from pipeline.clues import number_kinds
from pipeline.execute import countries_named, country_key, country_known
from pipeline.model import (
    DETOUR,
    FINISH_LINE,
    LINK_FOLLOW,
    ROADBLOCK,
    ROUTE_INFO,
    SEARCH_QUERY,
    WIDE,
    FactSpec,
    Leg,
    PageWording,
    RoadblockSpec,
    Stop,
    ToolStep,
    Transition,
)
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.stages.facts import COUNTRY_WORDS, PLACE_SUBJECT, SENTENCE_SPLIT, Fact, hop_modes, page_facts
from pipeline.stages.template_args import draw_params, instantiate_args
from pipeline.stages.verbalize import ask_options, route_names
from pipeline.stages.wide import make_wide_stops
from pipeline.tools.errors import TRANSIENT_FAILURES
from pipeline.tools.registry import absorbed
from pipeline.transforms import DETOURS, DetourError, apply_detour

SPARE_ROADBLOCKS = 5   # pre-validation keeps real-data chains first, so it needs a choice
SPARE_DETOURS = 2
# transforms that accept almost any integer a tool may return (used before the value is known)
BROAD_DETOURS = ("digit_sum", "binary_1bit_count", "next_prime", "num_divisors", "sum_prime_factors")


def resolved(fact: Fact, ctx: StageContext, page=None) -> Fact | None:
    """The fact as the tools understand it, or None when no roadblock could use it. A place must
    geocode as one place, the whole text matched ("Basra, Cairo" or "Petersen House, Washington,
    D.C., U.S" only partly match: a list, or a place the gazetteer does not hold); a place field
    holding a country ("United States") is a country fact; a country must be known to the tools
    by its whole text ("Germany, Italy, Switzerland, Austria" is not). The place a ``page`` is about
    must geocode into a country its opening text names, if it names any: "Antioch" geocodes to Antioch,
    California, while the page is the ancient city in Syria, at modern Antakya, Turkey (blind race 3).

    A probe the service fails (HTTP 5xx, timeout, garbled answer) makes the fact unusable for this
    leg, not the leg: plan probes dozens of candidate facts, and one flaky answer among them used to
    reject every attempt from a hub page (hard DAG legs: 0 of 4 under 20 % faults)."""
    try:
        return _resolved(fact, ctx, page)
    except TRANSIENT_FAILURES as exc:
        absorbed(exc, f"the {fact.role} fact {fact.value!r} ({fact.label[:60]}) unusable for this attempt")
        return None


def _resolved(fact: Fact, ctx: StageContext, page=None) -> Fact | None:
    if fact.role == "place":
        found = ctx.toolbox.call("maps_geocode", {"address": fact.value})
        if not found.ok or found.data.get("partial_match"):
            return None
        if found.data.get("place_type") == "country":
            return replace(fact, role="country") if _resolved(replace(fact, role="country"), ctx) else None
        if page is not None and fact.extraction.source == "subject" and (
                not _in_named_country(found.data, page) or _a_country_found_as_a_town(page)):
            return None
        return fact
    if fact.role == "country":
        return fact if ctx.toolbox.call("countries_population", {"country": fact.value}).ok else None
    return fact


def _a_country_found_as_a_town(page) -> bool:
    """Is the page about a country (its description or infobox type says so) that the geocoder did not
    take for one (a country it takes for one is a country fact above)? "Wales" ("Country within the
    United Kingdom") geocodes to the village of Wales in South Yorkshire, inside the country its
    opening text names: a distance from there is not one from Wales (blind race 10, R14)."""
    what = [w for w in (page.description, (page.infobox_type or "").replace("_", " ")) if w]
    return any((m := PLACE_SUBJECT.search(w)) and m.group(1).lower() in COUNTRY_WORDS for w in what)


def _in_named_country(geocoded: dict, page) -> bool:
    """Does the geocoded point lie in a country the page's short description or opening text names (or do
    they name none)? "Babylon" geocodes to Babylon, New York, while the page is the "Ancient Mesopotamian
    city in Iraq" (blind race 14, R25), whose first sentence, naming Mesopotamia too, asks for no country."""
    named = {country_key(name) for sentence in [page.description or ""] + SENTENCE_SPLIT.split(page.lead or "")
             for name in (countries_named(sentence, country_known) or [])}
    return not named or geocoded.get("country_code") in named


ENTITY_ROLES = ("place", "country", "date", "company", "coin")   # what roadblocks take from the route


def _modes_key(modes: tuple[str, ...]) -> str:
    """Extraction modes as a kept value's name part: sorted, since no page value depends on their order."""
    return "+".join(sorted(modes))


def usable_facts(title: str, ctx: StageContext, modes: tuple[str, ...]) -> list:
    """The facts a page stop may ask of the page at the level's extraction modes, resolved (memoised:
    plan's walk met every page of the route before build asks again). Kept under the modes sorted: the
    facts do not depend on their order, and a seed (the preset's order) is often a hop's target too
    (``facts.hop_modes``, sorted), whose facts were computed and kept once before."""
    def compute() -> list:
        page = ctx.page(title)
        return [f for f in (resolved(f, ctx, page) for f in page_facts(page, modes)) if f] if page else []
    return ctx.kept('usable_facts-' + _modes_key(modes), title, compute)


def has_usable_facts(title: str, ctx: StageContext, modes: tuple[str, ...]) -> bool:
    """``bool(usable_facts(...))``, kept apart: a walk asks it of every page a hop reaches, and reading a
    page's whole fact list back from disk for a yes or no was half of a 100,000-page world's plan."""
    return ctx.kept('has_usable_facts-' + _modes_key(modes), title,
                    lambda: bool(usable_facts(title, ctx, modes)))


def offers_entity(title: str, ctx: StageContext, modes: tuple[str, ...]) -> bool:
    """Does the page offer an entity fact at the level's modes? Kept: build asks it of every later page
    of the route, whose facts a large world's page cache no longer holds."""
    def compute() -> bool:
        page = ctx.page(title)
        return page is not None and any(f.role in ENTITY_ROLES for f in page_facts(page, modes))
    return ctx.kept('offers_entity-' + _modes_key(modes), title, compute)


def _page_stop(fact: Fact, page) -> Stop:
    """The page stop asking ``fact`` of ``page`` (its transition is set by the caller)."""
    return Stop(index=-1, kind=ROUTE_INFO, description=fact.label, page_url=page.url, page_title=page.title,
                extraction=fact.extraction, value=fact.value, value_type=fact.value_type,
                fact=FactSpec(role=fact.role, label=fact.label, unit=fact.unit),
                wording=PageWording(description=page.description, infobox_type=page.infobox_type))


def askable(stop: Stop, names: list[str], ctx: StageContext) -> bool:
    """Has the page stop's fact a question verbalize may ask (``verbalize.ask_options``) that names none of
    ``names``? A fact with none ("the third sentence" of Asia's page, whose openings all say Asia) made
    verbalize reject its leg after every other stage: 102 of the 231 legs it rejected in a release (seed 4).
    A page the tool cannot fetch now is left to verbalize to say so."""
    try:
        found = ctx.toolbox.call("fetch_webpage", {"url": stop.page_url})
    except TRANSIENT_FAILURES:
        return True
    return not found.ok or bool(ask_options(stop, names, found.data))


def _choose_fact(facts: list[Fact], rng: random.Random, want_roles: list[str]) -> Fact:
    for role in want_roles:
        pool = [f for f in facts if f.role == role]
        if pool:
            return pool[rng.randrange(len(pool))]
    return facts[rng.randrange(len(facts))]


def make_roadblock(name: str, template: dict, inputs: list[int], rng: random.Random, context: Stop,
                   unit: str | None = None) -> Stop:
    if unit and "conversion" in template.get("params", {}):  # convert only from the unit the page gives
        template = {**template, "params": {**template["params"], "conversion": [
            c for c in template["params"]["conversion"] if c.split(":")[0] == unit]}}
    params = draw_params(template, rng)
    chain = [ToolStep(tool=s["tool"], args=instantiate_args(s["args"], inputs, params),
                      output_key=s["output_key"], extract=s["extract"]) for s in template["steps"]]
    return Stop(index=-1, kind=ROADBLOCK, description=template["value"], depends_on=sorted(set(inputs)),
                page_url=context.page_url, page_title=context.page_title, template=name, tool_chain=chain,
                value_type="number",
                roadblock=RoadblockSpec(inputs=list(inputs), params=params, scale=template.get("scale", 1),
                                        round=template.get("round", 1), stable=template.get("stable", False),
                                        simulated_only=template.get("simulated_only", False)))


CONVERTIBLE_UNITS = {"km", "m", "kg", "hectares"}


def _templates_for(role: str, allow_simulated: bool, unit: str | None = None,
                   reserved: frozenset[str] = frozenset()) -> list[str]:
    names = []
    for name, t in roadblock_templates().items():
        if (t.get("simulated_only") and not allow_simulated) or name in reserved:
            continue
        if name == "math_conversion" and unit not in CONVERTIBLE_UNITS:
            continue  # converting a number of unknown unit (a year, a count) would be nonsense
        if t["inputs"][:1] == [role] and len(t["inputs"]) == 1:
            names.append(name)
    return sorted(names)


def entity_key(stop: Stop) -> str:
    """What a page fact names, as one key ("Britain" and "United Kingdom" are one country)."""
    return country_key(str(stop.value)) if stop.fact.role == "country" else str(stop.value)


def _pairs_for(pages: list[Stop], allow_simulated: bool, reserved: frozenset[str] = frozenset()
               ) -> dict[str, list[tuple[int, int]]]:
    """Two-input templates (templates/roadblocks.toml) and the page pairs that can feed them: input 0
    from a page of the first role, input 1 from another page of the second, with different values;
    a pair of one role is taken once, in route order."""
    out: dict[str, list[tuple[int, int]]] = {}
    for name, t in sorted(roadblock_templates().items()):
        if len(t["inputs"]) != 2 or (t.get("simulated_only") and not allow_simulated) or name in reserved:
            continue
        first, second = t["inputs"]
        found = [(i, j) for i, a in enumerate(pages) for j, b in enumerate(pages)
                 if i != j and a.fact.role == first and b.fact.role == second and entity_key(a) != entity_key(b)
                 and (first != second or i < j)]
        if found:
            out[name] = found
    return out


def run(leg: Leg, ctx: StageContext) -> Leg:
    preset = ctx.presets[leg.level]
    plan = leg.plan
    if plan is None:
        raise Rejected("build: the leg has no plan")
    rng = rng_for(leg, "build")
    allow_sim = ctx.settings.allow_simulated and ctx.settings.simulated_templates
    templates = roadblock_templates()
    reserved = diamond_only_templates() if leg.variant == "dag" else frozenset()

    # 1. page stops, one fact each; alternate the roles so roadblocks find inputs
    items: list[tuple[tuple, Stop]] = []
    pages: list[Stop] = []
    page_facts_left: list[list[Fact]] = []   # each page's facts it did not ask (none found unaskable)
    role_cycle = [["place", "number"], ["number", "place"], ["country", "place", "number"], ["date", "number"]]
    if leg.variant == "dag":  # diamonds fork places and countries: prefer them
        role_cycle = [["place", "country", "number"], ["country", "place", "number"], ["place", "number"], ["number", "place"]]
    names = route_names(plan.route, leg.seed_title, ctx)   # what verbalize forbids every clue to say
    for i, title in enumerate(plan.route):
        page = ctx.page(title)
        if page is None:
            raise Rejected(f"build: page {title!r} is missing or malformed")
        modes = preset.extraction if i == 0 else hop_modes(preset.extraction)
        facts = usable_facts(title, ctx, modes)
        if not facts:
            raise Rejected(f"build: no usable fact on {title!r}")
        want = role_cycle[(i + rng.randrange(2)) % len(role_cycle)]
        if sum(p.fact.role in ENTITY_ROLES for p in pages) >= max(1, plan.roadblocks - 1):
            want = ["number"] + want   # every page of a chain stays: more text than roadblocks could take would go
        fact = _choose_fact(facts, rng, want)
        entity = [f for f in facts if f.role in ENTITY_ROLES]
        if fact.role not in ENTITY_ROLES and entity and not any(p.fact.role in ENTITY_ROLES for p in pages) and (
                i == len(plan.route) - 1 or not any(offers_entity(t, ctx, preset.extraction) for t in plan.route[i + 1:])):
            fact = entity[rng.randrange(len(entity))]   # the last page offering one: roadblocks need an entity
        stop, others, roles = _page_stop(fact, page), [f for f in facts if f is not fact], [fact.role, *want]
        while not askable(stop, names, ctx):   # another of the page's facts, of the same role where one is
            if not others:
                raise Rejected(f"build: no fact of {title!r} can be asked without naming a page of the route")
            fact = _choose_fact(others, rng, roles)
            others.remove(fact)
            stop = _page_stop(fact, page)
        if i > 0:   # reached through the page before by the plan's hop (object ids until indices exist)
            before = ctx.page(plan.route[i - 1])
            linked = before is not None and any(link.title == title for link in before.links)
            stop.transition = Transition(kind=LINK_FOLLOW if linked else SEARCH_QUERY, from_stop=id(pages[-1]),
                                         target_url=page.url, search_query=None if linked else title,
                                         relation=plan.relations[i - 1])
        pages.append(stop)
        page_facts_left.append(others)
        items.append(((i, 0, 0), stop))

    # 1b. wide stops (issue 34): sets collected around a place or country of the route. Too few here
    # can only be fewer after pre-validation, which rejected them there: half the hard and extreme
    # legs that reached it, each after a dry run of every stop. Made before the roadblocks so that a
    # route short of them can first ask other places and countries its pages give (``_widen``)
    wide = make_wide_stops(pages, ctx, rng, leg.level)
    if len(wide) < preset.wide[0]:
        wide = _widen(pages, page_facts_left, wide, items, names, ctx, rng, leg.level)
    if len(wide) < preset.wide[0]:
        raise Rejected(f"build: {len(wide)} wide stops can be made on the route's places, countries and pages, "
                       f"the level needs {preset.wide[0]}-{preset.wide[1]}")

    # 2. roadblocks: consume text facts first (they must feed something), then any fact
    seq = 0
    outputs: list[tuple[tuple, Stop]] = []  # (anchor, roadblock) for detours to consume
    # each text fact gets two candidate roadblocks: if one chain fails, the other still consumes it
    pending_text = [(i, s) for i, s in enumerate(pages) if s.fact.role in ("place", "country", "date", "company", "coin")] * 2
    n_roadblocks = plan.roadblocks + SPARE_ROADBLOCKS
    made: set[tuple[str, tuple[int, ...]]] = set()     # (template, input pages)
    # (template, what the inputs name): Italy reached twice (a page's country, then a choice hop) asks its
    # capital's elevation once (blind race 10: the same template on two stops of one country)
    made_of: set[tuple[str, tuple[str, ...]]] = set()
    for n in range(n_roadblocks + 4 * len(pages) + 4):
        if len(made) >= n_roadblocks:
            break
        seq += 1
        choice = None
        if pending_text:
            i, src = pending_text.pop(0)
            names = _templates_for(src.fact.role, allow_sim, reserved=reserved)
            if names:
                choice = (names[rng.randrange(len(names))], [i], i)
        if choice is None and rng.random() < 0.4:   # a two-input template on two pages of the chain (issue 21)
            pairs = _pairs_for(pages, allow_sim, reserved)
            if pairs:
                name = sorted(pairs)[rng.randrange(len(pairs))]
                i, j = pairs[name][rng.randrange(len(pairs[name]))]
                choice = (name, [i, j], max(i, j))
        if choice is None:   # any page's fact that some template takes (every roadblock has a route input)
            takers = {i: [n for n in _templates_for(s.fact.role, allow_sim, s.fact.unit, reserved)
                          if (n, (entity_key(s),)) not in made_of] for i, s in enumerate(pages)}
            fed = sorted(i for i, names in takers.items() if names)
            if not fed:
                break
            # spread over the chain: the pages asked least so far first (issue 21: four questions of one country)
            asked = {i: sum(q[1] == (i,) for q in made) for i in fed}
            fed = [i for i in fed if asked[i] == min(asked.values())]
            i = fed[rng.randrange(len(fed))]
            choice = (takers[i][rng.randrange(len(takers[i]))], [i], i)
        name, input_pages, anchor = choice
        unit = pages[input_pages[0]].fact.unit if input_pages else None
        stop = make_roadblock(name, templates[name], [id(pages[k]) for k in input_pages], rng, pages[anchor], unit)
        question = (name, tuple(entity_key(pages[k]) for k in input_pages))
        if question in made_of:   # one template once per input: airports within 20 and 40 km of one capital are one search
            continue
        made_of.add(question)
        made.add((name, tuple(input_pages)))
        key = (anchor, 1, seq)
        items.append((key, stop))
        outputs.append((key, stop))

    # 2b. the wide stops made in 1b, after their page's roadblocks
    for anchor, stop in wide:
        seq += 1
        items.append(((anchor, 1, seq), stop))

    # 3. detours: on page numbers/dates/texts (values known now) or on roadblock outputs (checked later)
    n_detours = plan.detours + SPARE_DETOURS
    detour_source: dict[int, int] = {}  # id(detour) -> id(its source stop), until indices exist
    asked: set[tuple[str, int]] = set()  # (transform, source): the same question twice adds nothing
    page_inputs = [(i, s) for i, s in enumerate(pages) if s.value_type in ("number", "date")]
    for n in range(n_detours):
        seq += 1
        if not page_inputs and not outputs:
            break   # nothing numeric to work on: pre-validation says what the level misses
        use_page = page_inputs and (rng.random() < 0.5 or not outputs)
        if use_page:
            i, src = page_inputs[rng.randrange(len(page_inputs))]
            fitting = detours_for(src)
            if not fitting:
                continue
            transform, source, key = fitting[rng.randrange(len(fitting))], src, (i, 2, seq)
        else:
            anchor, src = outputs[rng.randrange(len(outputs))]
            transform, source, key = BROAD_DETOURS[rng.randrange(len(BROAD_DETOURS))], src, (anchor[0], 3, seq)
        if (transform, id(source)) in asked:
            continue
        asked.add((transform, id(source)))
        stop = Stop(index=-1, kind=DETOUR, description=DETOURS[transform].phrase, page_url=source.page_url,
                    page_title=source.page_title, transform=transform, value_type="number")
        detour_source[id(stop)] = id(source)
        items.append((key, stop))

    # 4. order by anchor page, then assign indices and turn object links into stop references
    items.sort(key=lambda kv: kv[0])
    stops = [s for _, s in items]
    index_of = {id(s): n for n, s in enumerate(stops)}
    for n, s in enumerate(stops):
        s.index = n
    for s in stops:
        if s.transition is not None and s.transition.from_stop is not None:
            s.transition.from_stop = index_of[s.transition.from_stop]
            s.depends_on = [s.transition.from_stop]
        if s.kind == ROADBLOCK:
            s.roadblock.inputs = [index_of[o] for o in s.roadblock.inputs]  # object ids until now
            s.depends_on = sorted(set(s.roadblock.inputs))
            for step in s.tool_chain:
                step.args = refs.remap(step.args, index_of)
        elif s.kind == DETOUR:
            s.source_stop = index_of[detour_source[id(s)]]
            s.depends_on = [s.source_stop]
        elif s.kind == WIDE:
            s.depends_on = [index_of[o] for o in s.depends_on]   # object ids until now
    stops.append(Stop(index=len(stops), kind=FINISH_LINE, description="finish line", value_type="number",
                      page_url=None))
    leg.stops = stops
    if not any(s.kind == ROADBLOCK for s in stops):
        raise Rejected("build: no roadblock could be instantiated")
    return leg


WIDE_INPUT_ROLES = ("place", "country")   # the facts a countries or airports set is asked around


def _widen(pages: list[Stop], left: list[list[Fact]], wide: list[tuple[int, Stop]], items: list[tuple[tuple, Stop]],
           names: list[str], ctx: StageContext, rng: random.Random, level: str) -> list[tuple[int, Stop]]:
    """The level's wide stops for a route whose page stops gave too few: a page whose stop no wide stop is
    made on asks instead another place or country it gives (askable), kept where the wide stops made then
    are more, one page at a time in route order, until the level's count is made or no page has one.
    ``pages`` and ``items`` are updated in place, the next page's hop then coming from the new stop. At
    10^6 pages, where no page set is asked (too many opening texts to scan) and few links sets fit, 9 of 15
    extreme linear legs were rejected for too few after their crawl and plan, though their routes gave other
    places and countries than the ones asked."""
    need = ctx.presets[level].wide[0]
    for i in range(len(pages)):
        if len(wide) >= need:
            break
        old = pages[i]
        options = [f for f in left[i] if f.role in WIDE_INPUT_ROLES and isinstance(f.value, str) and f.value != old.value]
        if id(old) in {o for _, s in wide for o in s.depends_on} or not options:   # (inputs by object id)
            continue
        rng.shuffle(options)
        after = pages[i + 1].transition if i + 1 < len(pages) else None
        at = next(n for n, (_, s) in enumerate(items) if s is old)
        for fact in options:
            new = _page_stop(fact, ctx.page(old.page_title))
            if not askable(new, names, ctx):
                continue
            new.transition = old.transition
            _swap(pages, items, i, at, new, after, old)
            more = make_wide_stops(pages, ctx, rng, level)
            if len(more) > len(wide):
                wide = more
                break
            _swap(pages, items, i, at, old, after, new)
    return wide


def _swap(pages: list[Stop], items: list[tuple[tuple, Stop]], i: int, at: int, new: Stop, after, old: Stop) -> None:
    """Put ``new`` in place of page stop ``old`` (route position ``i``, ``items[at]``), the next hop coming from it."""
    pages[i] = new
    items[at] = ((i, 0, 0), new)
    if after is not None and after.from_stop == id(old):
        after.from_stop = id(new)


CALENDAR_DETOURS = frozenset({"leap_years_to_2000", "day_of_week"})   # detours that read a number as a year AD


def _a_year_bc(stop: Stop) -> bool:
    """Is the page stop's value a year its sentence counts BC ("c. 1894 BC")? "How many leap years there
    are from 1894 to 2000" of it has two answers: the year as a number, or the year BC (blind race 14, R25)."""
    ex = stop.extraction
    if ex is None or ex.sentence is None or ex.number_index is None:
        return False
    kinds = number_kinds(ex.sentence)
    return ex.number_index < len(kinds) and kinds[ex.number_index][1].singular.endswith(" BC")


def detours_for(stop: Stop) -> list[str]:
    """The detours a page stop's value can take, by name: of its type, in their domain, and no calendar
    detour of a year BC."""
    return [name for name, d in sorted(DETOURS.items())
            if d.takes == ("date" if stop.value_type == "date" else "number") and _works(name, stop.value)
            and not (name in CALENDAR_DETOURS and _a_year_bc(stop))]


def _works(name: str, value: Any) -> bool:
    try:
        apply_detour(name, value)
        return True
    except (DetourError, ValueError):
        return False
