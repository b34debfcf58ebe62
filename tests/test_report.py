"""Static dataset report: statistics against independent counts, escaping, the DAG picture,
race-score tables, the CLI, and (when Debian ``chromium`` is installed) a headless browser load
with no console errors, no network request and the riddle in the DOM."""
from __future__ import annotations

import html
import itertools
import json
import re
import shutil
import subprocess
import time
import urllib.request
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import escape

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.model import Clue, Leg, Stop, TraceEntry
from pipeline.report import __main__ as report_cli
from pipeline.report import leg_filename, render_report
from pipeline.report.charts import dag_picture, spread
from pipeline.report.stats import (
    dataset_statistics,
    mean_page_overlap,
    provenance_shares,
    template_usage,
    tool_usage,
    world_spread,
)
from pipeline.stages.base import StageContext

SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Two easy legs (one linear, one DAG) generated offline into one legs.parquet, tmp cache."""
    root = tmp_path_factory.mktemp("report")
    cache = root / "cache.sqlite"
    ctx = StageContext.create(load_settings(cache_path=cache))
    tables = []
    for variant in ("linear", "dag"):
        out = root / variant
        run_generation(GenerationParams(level="easy", variant=variant, count=1, seed=4), out, ctx.settings,
                       local_map_stage(ctx))
        tables.append(pq.read_table(out / "legs.parquet"))
    import pyarrow as pa
    merged = root / "all" / "legs.parquet"
    merged.parent.mkdir()
    pq.write_table(pa.concat_tables(tables), merged)
    return {"root": root, "cache": cache, "settings": ctx.settings, "path": merged.parent,
            "legs": load_legs(merged), "rows": pq.read_table(merged).to_pylist()}


def hand_leg(leg_id: str, variant: str, kinds: list[str], provenances: list[str], diamond_at: int | None = None) -> Leg:
    stops = [Stop(index=i, kind=k, description=f"stop {i}", depends_on=[i - 1] if i else [],
                  template=f"tpl_{i % 2}" if k == "roadblock" else None,
                  transform="digit_sum" if k == "detour" else None) for i, k in enumerate(kinds)]
    if diamond_at is not None:
        for i in (diamond_at, diamond_at + 1, diamond_at + 2):
            stops[i].diamond = 1
        stops[diamond_at].diamond_role, stops[diamond_at + 1].diamond_role = "branch", "branch"
        stops[diamond_at + 2].diamond_role = "merge"
    trace = [TraceEntry(stop=0, step=n, tool=f"tool_{n % 2}", args={}, response="{}", provenance=p,
                        served_from="computed") for n, p in enumerate(provenances)]
    return Leg(leg_id=leg_id, level="easy", variant=variant, seed=0, seed_title="Seed", seed_url="https://x/Seed",
               stops=stops, passcode=3, trace=trace)


# ---- statistics ---------------------------------------------------------------------------
def test_statistics_are_hand_computed_means_per_variant_and_level():
    a = hand_leg("a", "dag", ["route_info", "roadblock", "roadblock", "merge", "detour", "finish_line"],
                 ["snapshot", "offline-data", "simulated"], diamond_at=1)
    b = hand_leg("b", "dag", ["route_info", "roadblock", "finish_line"], ["snapshot"])
    c = hand_leg("c", "linear", ["route_info", "roadblock", "detour", "detour", "finish_line"], ["snapshot"] * 4)
    rows = {(r["variant"], r["level"]): r for r in dataset_statistics([c, a, b])}
    dag = rows[("dag", "easy")]
    assert dag["legs"] == 2
    assert dag["mean_stops"] == (6 + 3) / 2
    assert dag["mean_roadblocks"] == (2 + 1) / 2
    assert dag["mean_detours"] == (1 + 0) / 2
    assert dag["mean_diamonds"] == (1 + 0) / 2
    assert dag["mean_tool_calls"] == (3 + 1) / 2
    assert dag["pct_linear"] == 50.0                  # b has no diamond
    assert rows[("linear", "easy")]["mean_detours"] == 2 and rows[("linear", "easy")]["pct_linear"] == 100.0
    total = rows[("all", "")]
    assert total["legs"] == 3 and total["mean_stops"] == (6 + 3 + 5) / 3
    # variant order follows the model (linear before dag), the total last
    assert [r["variant"] for r in dataset_statistics([c, a, b])] == ["linear", "dag", "all"]


def test_provenance_and_tool_and_template_usage_by_hand():
    a = hand_leg("a", "dag", ["route_info", "roadblock", "roadblock", "merge", "finish_line"],
                 ["snapshot", "simulated", "simulated", "offline-data", "replay"], diamond_at=1)
    shares = provenance_shares([a])[-1]
    assert shares["n_values"] == 5
    assert shares["counts"] == {"snapshot": 1, "offline-data": 1, "simulated": 2, "live": 0, "other": 1}
    assert shares["shares"]["simulated"] == pytest.approx(0.4)
    tools = {t["tool"]: t for t in tool_usage([a])}
    assert tools["tool_0"]["calls"] == 3 and tools["tool_1"]["calls"] == 2
    assert tools["tool_1"]["provenance"]["simulated"] == 1 and tools["tool_1"]["provenance"]["offline-data"] == 1
    usage = template_usage([a], known_roadblocks=["tpl_0", "tpl_1", "never_used"])
    by_name = {r["name"]: r for r in usage["roadblocks"]}
    assert by_name["tpl_1"]["uses"] == 1 and by_name["tpl_1"]["in_diamonds"] == 1     # stop 1
    assert by_name["tpl_0"]["uses"] == 1                                              # stop 2
    assert by_name["never_used"]["uses"] == 0


def paged_leg(leg_id: str, seed: str, pages: list[str], provenances: list[str]) -> Leg:
    leg = hand_leg(leg_id, "linear", ["route_info"] * len(pages) + ["finish_line"], provenances)
    for stop, page in zip(leg.stops, pages):
        stop.page_title = page
    leg.seed_title = seed
    return leg


def test_world_spread_by_hand():
    a = paged_leg("a", "S1", ["S1", "P", "Q"], ["snapshot", "simulated"])
    b = paged_leg("b", "S1", ["S1", "P"], ["offline-data"])
    c = paged_leg("c", "S2", ["S2", "R"], ["snapshot", "snapshot", "simulated", "live"])
    row = world_spread([a, b, c])[-1]
    assert (row["legs"], row["distinct_seeds"], row["max_seed_uses"]) == (3, 2, 2)
    assert (row["page_visits"], row["distinct_pages"]) == (7, 5)
    # pairs: a-b share {S1, P} of {S1, P, Q} -> 2/3; a-c and b-c share nothing
    assert row["mean_page_overlap"] == pytest.approx((2 / 3) / 3)
    assert row["simulated_share"] == pytest.approx(2 / 7)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from("ABCDEFG"), min_size=1, max_size=5), min_size=2, max_size=12))
def test_mean_page_overlap_equals_the_pairwise_jaccard_mean(page_lists):
    legs = [paged_leg(str(i), pages[0], pages, []) for i, pages in enumerate(page_lists)]
    sets = [set(p) for p in page_lists]
    pairs = list(itertools.combinations(sets, 2))
    assert mean_page_overlap(legs) == pytest.approx(sum(len(x & y) / len(x | y) for x, y in pairs) / len(pairs))


def test_statistics_agree_with_the_flat_columns_generation_wrote(dataset):
    """legs.parquet's n_* columns are written by flows/generate.py, independently of the report."""
    rows = dataset["rows"]
    stats = {(r["variant"], r["level"]): r for r in dataset_statistics(dataset["legs"])}
    for variant in ("linear", "dag"):
        mine = [r for r in rows if r["variant"] == variant]
        got = stats[(variant, "easy")]
        assert got["legs"] == len(mine)
        assert got["mean_stops"] == pytest.approx(sum(r["n_stops"] for r in mine) / len(mine))
        assert got["mean_roadblocks"] == pytest.approx(sum(r["n_roadblocks"] or 0 for r in mine) / len(mine))
        assert got["mean_detours"] == pytest.approx(sum(r["n_detours"] or 0 for r in mine) / len(mine))
        assert got["mean_diamonds"] == pytest.approx(sum(r["n_diamonds"] or 0 for r in mine) / len(mine))
        assert got["mean_tool_calls"] == pytest.approx(sum(r["n_tool_calls"] or 0 for r in mine) / len(mine))
    assert stats[("linear", "easy")]["pct_linear"] == 100.0
    assert stats[("dag", "easy")]["pct_linear"] == 0.0          # easy DAG legs have exactly one diamond
    shares = provenance_shares(dataset["legs"])[-1]
    sim = sum(r["simulated_share"] * r["n_tool_calls"] for r in rows)
    assert shares["counts"]["simulated"] == round(sim)


# ---- pictures -----------------------------------------------------------------------------
def test_spread_keeps_order_and_spacing_closest_to_wishes():
    assert spread([0, 0, 0]) == [-1, 0, 1]
    assert spread([0, 10]) == [0, 10]
    ys = spread([5, 1, 1.2])
    assert all(b - a >= 1 - 1e-9 for a, b in itertools.pairwise(ys))


def test_dag_picture_layers_follow_dependency_depth(dataset):
    for leg in dataset["legs"]:
        pic = dag_picture(leg)
        at = {n["index"]: n for n in pic["nodes"]}
        assert sorted(at) == [s.index for s in leg.stops]
        depth: dict[int, int] = {}
        for s in leg.stops:                                    # longest path from a source
            depth[s.index] = max((depth[d] + 1 for d in s.depends_on), default=0)
        by_depth: dict[int, set] = {}
        for i, d in depth.items():
            by_depth.setdefault(d, set()).add(at[i]["x"])
        assert all(len(xs) == 1 for xs in by_depth.values())   # one column per depth
        assert [min(by_depth[d]) for d in sorted(by_depth)] == sorted(min(by_depth[d]) for d in by_depth)
        for s in leg.stops:
            for d in s.depends_on:
                assert at[d]["x"] < at[s.index]["x"]
        for n in pic["nodes"]:                                   # no two nodes overlap
            for m in pic["nodes"]:
                if n is not m and n["x"] == m["x"]:
                    assert abs(n["y"] - m["y"]) >= n["h"]
        assert len(pic["edges"]) == sum(len(s.depends_on) for s in leg.stops)
        assert len(pic["diamonds"]) == leg.diamonds


# ---- rendering ----------------------------------------------------------------------------
def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(m) for m in re.findall(r"<svg\b.*?</svg>", page, flags=re.DOTALL)]


def test_leg_page_shows_riddle_stops_trace_and_a_well_formed_dag(dataset, tmp_path):
    legs = dataset["legs"]
    render_report(legs, tmp_path, datasets=[str(dataset["path"])])
    dag_leg = next(l for l in legs if l.variant == "dag")
    page = (tmp_path / "legs" / leg_filename(dag_leg.leg_id)).read_text(encoding="utf-8")
    for clue in dag_leg.clues:
        assert str(escape(clue.text)) in page
    (dag_svg,) = [s for s in svgs(page) if "dag" in s.get("class", "")]
    nodes = dag_svg.findall(f".//{SVG_NS}g[@class]")
    kinds = [g.get("class").split("kind-")[1] for g in nodes if g.get("class").startswith("node ")]
    assert kinds == [s.kind for s in dag_leg.stops]
    fills = {g.get("class").split("kind-")[1]: g.find(f"{SVG_NS}rect").get("fill") for g in nodes
             if g.get("class").startswith("node ")}
    assert len(set(fills.values())) == len(fills)                # one colour per kind
    assert len(dag_svg.findall(f".//{SVG_NS}g[@class='diamond-box']")) == dag_leg.diamonds == 1
    # the trace table lists every golden call with its provenance
    trace_part = page.split('id="trace"')[1]
    assert trace_part.count("<tr>") == len(dag_leg.trace) + 1
    for t in dag_leg.trace:
        assert str(escape(t.tool)) in trace_part
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    for leg in legs:
        assert f'href="legs/{leg_filename(leg.leg_id)}"' in index
    assert "http://" not in index.split("<main>")[0] and "https://" not in index.split("<main>")[0]


def test_everything_from_the_data_is_escaped(dataset, tmp_path):
    leg = Leg.from_json(dataset["legs"][0].to_json())
    leg.leg_id = "../evil<x>"
    leg.seed_title = '"><img src=x onerror="window.pwned=2">'
    leg.clues[0] = Clue(number=1, stop=0, text="Go <script>window.pwned=1</script> & find 'it'")
    leg.stops[0].description = "</title><script>bad()</script>"
    leg.trace[0].response = '{"x": "</code><script>bad()</script>"}'
    written = render_report([leg], tmp_path)
    assert all(p.resolve().is_relative_to(tmp_path.resolve()) for p in written)
    page = written[1].read_text(encoding="utf-8")
    assert written[1].parent == tmp_path / "legs"
    index = written[0].read_text(encoding="utf-8")
    for text in (page, index):
        assert "<script" not in text and "<img" not in text
    assert "Go &lt;script&gt;window.pwned=1&lt;/script&gt; &amp; find &#39;it&#39;" in page
    assert "&lt;/title&gt;&lt;script&gt;bad()" in page
    assert "&#34;&gt;&lt;img src=x" in index


def table_rows(fragment: str) -> list[list[str]]:
    """Cell texts of every body row (<td> cells) of the HTML fragment."""
    class Rows(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag == "td":
                self.cell = []

        def handle_endtag(self, tag):
            if tag == "td" and self.cell is not None:
                self.rows[-1].append(" ".join("".join(self.cell).split()))
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)
    parser = Rows()
    parser.feed(fragment)
    return [r for r in parser.rows if r]


def race_report(dataset, tmp_path) -> Path:
    from pipeline import score
    from pipeline.race import run_trial
    from pipeline.tools.registry import Toolbox

    runs = tmp_path / "runs"
    toolbox = Toolbox(dataset["settings"])
    for leg in dataset["legs"]:
        run_trial(leg, "oracle", runs, toolbox=toolbox)
        run_trial(leg, "random", runs)
    out = tmp_path / "score" / "report.json"
    assert score.main(["--legs", str(dataset["path"]), "--runs", str(runs), "--out", str(out)]) == 0
    return out


def test_race_scores_and_error_decomposition_from_a_score_report(dataset, tmp_path):
    report_path = race_report(dataset, tmp_path)
    report = json.loads(report_path.read_text())
    render_report(dataset["legs"], tmp_path / "site", runs_report=report)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    runs = index.split('id="runs"')[1].split('id="legs"')[0]
    got = {(r[0], r[1], r[2]): (int(r[3]), r[4]) for r in table_rows(runs.split("<table>")[1]) if len(r) > 5}
    for g in report["groups"]:
        assert got[(g["agent"], g["variant"], g["level"])] == (g["n"], f"{100 * g['fa']:.1f}%")
    assert got[("all", "", "")] == (report["overall"]["n"], f"{100 * report['overall']['fa']:.1f}%")
    chart = next(s for s in svgs(runs) if "Outcome" in (s.get("aria-label") or ""))
    bars = chart.findall(f"{SVG_NS}g[@class='bar']")
    assert len(bars) == len(report["groups"]) + 1
    # green is the solved share of each group (the oracle's bars are all green); the other
    # segments are the error classes of the failed trials, so every bar fills its width
    for bar, group in zip(bars, report["groups"] + [report["overall"]]):
        label = bar.find(f"{SVG_NS}text").text
        widths: dict[str, float] = {}
        for r in bar.findall(f"{SVG_NS}rect")[1:]:
            widths[r.get("fill")] = widths.get(r.get("fill"), 0.0) + float(r.get("width"))
        assert widths.get("#3f8f3a", 0.0) == pytest.approx(560 * group["fa"]), label
        assert sum(widths.values()) == pytest.approx(560), label
        if label.startswith("oracle"):
            assert set(widths) == {"#3f8f3a"}


def test_cli_runs_the_invariants_and_writes_every_page(dataset, tmp_path, capsys):
    out = tmp_path / "site"
    code = report_cli.main([str(dataset["path"]), "--out", str(out), "--cache", str(dataset["cache"])])
    assert code == 0
    assert "0 legs fail an invariant" in capsys.readouterr().out
    index = (out / "index.html").read_text(encoding="utf-8")
    n = len(dataset["legs"])
    holding = {r[0]: r[1] for r in table_rows(index.split('id="invariants"')[1].split("</table>")[0])}
    assert holding == {name: f"{n}/{n}" for name in
                       ("1_dag", "2_counts", "3_expressions", "4_value_flow", "5_riddle", "6_provenance", "7_page_facts",
                        "8_places", "9_route_inputs", "10_bridges", "11_hops", "12_one_question", "13_wide_sets")}
    clued = sum(1 for leg in dataset["legs"] for s in leg.stops
                if s.kind == "route_info" and s.index != 0 and s.index in {c.stop for c in leg.clues})
    assert table_rows(index.split('id="exposure"')[1].split("</table>")[0])[-1][:3] == ["all", "", str(clued)]
    spread_rows = table_rows(index.split('id="spread"')[1].split("</table>")[0])
    assert spread_rows[-1][:4] == ["all", "", str(n), str(len({leg.seed_title for leg in dataset["legs"]}))]
    assert sorted(p.name for p in (out / "legs").iterdir()) == sorted(leg_filename(l.leg_id) for l in dataset["legs"])
    # deterministic: a second run gives the same bytes
    again = tmp_path / "again"
    report_cli.main([str(dataset["path"]), "--out", str(again), "--cache", str(dataset["cache"])])
    assert (again / "index.html").read_bytes() == (out / "index.html").read_bytes()
    # the checks need no cache: under an empty one every golden-trace call is re-executed offline
    other = tmp_path / "other"
    report_cli.main([str(dataset["path"]), "--out", str(other), "--cache", str(tmp_path / "empty.sqlite")])
    other_index = (other / "index.html").read_text(encoding="utf-8")
    holding = {r[0]: r[1] for r in table_rows(other_index.split('id="invariants"')[1].split("</table>")[0])}
    assert holding["3_expressions"] == f"{n}/{n}" and holding["1_dag"] == f"{n}/{n}"
    calls = sum(len(leg.trace) for leg in dataset["legs"])
    assert f"Golden traces: {calls} calls re-executed, 0 checked against the trace only." in other_index


# ---- headless browser ---------------------------------------------------------------------
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions"]


class DevTools:
    """A minimal Chrome DevTools Protocol client: load a page, collect console errors,
    exceptions, failed loads and every network request, evaluate an expression."""

    def __init__(self, profile: Path):
        self.proc = subprocess.Popen([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                      "--remote-debugging-port=0", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        pages = []
        while not pages and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as r:
                pages = [t for t in json.load(r) if t["type"] == "page"]
            time.sleep(0.1)
        from websockets.sync.client import connect
        self.ws = connect(pages[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def load(self, url: str) -> None:
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.events.clear()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < deadline, "page did not load"
            self.events.append(json.loads(self.ws.recv(timeout=30)))
        self.call("Runtime.evaluate", expression="new Promise(r => setTimeout(r, 200))", awaitPromise=True)

    def errors(self) -> list[str]:
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console: {p.get('args')}")
            elif m == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.loadingFailed":
                out.append(f"failed load: {p}")
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def close(self) -> None:
        if getattr(self, "ws", None) is not None:
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian chromium (apt-get install chromium)")
def test_report_shows_the_solver_acceptance_of_each_run(dataset, tmp_path):
    from pipeline.report.site import write_report
    runs = [dataset["root"] / "linear", dataset["root"] / "dag"]
    write_report(runs, tmp_path / "site", dataset["settings"], check_invariants=False)
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    rows = table_rows(index.split('id="acceptance"')[1].split("</table>")[0])
    assert [(r[1], r[2]) for r in rows] == [("easy", "linear"), ("easy", "dag")]
    for row, run in zip(rows, runs, strict=True):
        rejected = pq.read_table(run / "rejected.parquet").to_pylist()
        ambiguous = sum("the riddle is ambiguous" in (r["reason"] or "") for r in rejected)
        assert row[3] == row[4] == "1" and row[5] == str(ambiguous)   # one leg each, solved


def test_pages_load_in_headless_chromium_without_errors_or_network(dataset, tmp_path):
    pytest.importorskip("websockets.sync.client", reason="the DevTools client needs websockets")
    legs = [Leg.from_json(l.to_json()) for l in dataset["legs"]]
    hostile = legs[-1]
    hostile.clues[0] = Clue(number=1, stop=0, text=hostile.clues[0].text + ' <script>window.pwned=1</script>'
                            '<img src=x onerror="window.pwned=2">')
    site = tmp_path / "site"
    render_report(legs, site, runs_report=json.loads(race_report(dataset, tmp_path).read_text()))
    browser = DevTools(tmp_path / "profile")
    try:
        for leg in legs:
            for url in ((site / "index.html").as_uri(), (site / "legs" / leg_filename(leg.leg_id)).as_uri()):
                browser.load(url)
                assert browser.errors() == [], url
                assert all(u.startswith(("file:", "data:")) for u in browser.requests()), browser.requests()
                assert browser.evaluate("typeof window.pwned") == "undefined"
            text = squash(browser.evaluate("document.body.innerText"))
            for clue in leg.clues:                   # the riddle is in the rendered leg page
                assert squash(clue.text) in text
            assert browser.evaluate("document.querySelectorAll('svg.dag g.node').length") == len(leg.stops)
    finally:
        browser.close()
    # --dump-dom of a leg page holds its riddle (text nodes serialised with &, <, > escaped)
    leg = legs[0]
    dom = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--dump-dom",
                          (site / "legs" / leg_filename(leg.leg_id)).as_uri()],
                         check=False, capture_output=True, text=True, timeout=60).stdout
    for clue in leg.clues:
        assert html.escape(clue.text, quote=False) in dom


def test_search_exposure_flags_a_quoted_clue_and_not_the_generated_ones(tmp_path):
    """The measure behind issue 14's goal: generated page clues must be walked (no top-5 snippet of a
    search with their words shows the value), and a clue quoting the fact's own sentence is caught."""
    from pipeline.report.exposure import stop_exposure
    from pipeline.tools.registry import Toolbox
    ctx = StageContext.create(load_settings(cache_path=tmp_path / "cache.sqlite"))
    params = GenerationParams(level="medium", variant="linear", count=2, seed=3)
    legs = run_generation(params, tmp_path / "run", ctx.settings, local_map_stage(ctx)).accepted
    toolbox = Toolbox(ctx.settings)
    rows = [r for leg in legs for r in stop_exposure(leg, toolbox)]
    assert rows and not any(r["value_shown"] for r in rows)
    quoted = [(leg, s) for leg in legs for s in leg.stops
              if s.index and s.extraction and s.extraction.sentence and str(s.value) in s.extraction.sentence]
    assert quoted, "no prose stop to quote in these legs"
    leg, stop = quoted[0]
    for clue in leg.clues:
        if clue.stop == stop.index:
            clue.text = f"{stop.index + 1}. {stop.extraction.sentence}"
    assert any(r["value_shown"] for r in stop_exposure(leg, toolbox))
