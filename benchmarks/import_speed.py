"""Import speed of ``python -m pipeline.snapshot build`` on a synthetic MediaWiki dump of any size,
made from the real sample pages (../shared/data/wikipedia): MB/s, pages/s, CPU and peak memory.
Optionally the same for a synthetic ZIM archive. Prints; never fails. Files go to --dir (default
/tmp/legwork-import-speed), never into the repository; they are removed unless --keep.

    python benchmarks/import_speed.py [--size-mb 2048] [--workers N] [--bz2] [--zim-mb 0] [--keep]
    python benchmarks/import_speed.py --dump DUMP [--workers 1,2] [--dask-workers 1,2]

``--dump`` measures a dump made elsewhere (benchmarks/synthetic_wiki.py writes Wikipedia-shaped
multistream dumps with their index); ``--workers`` and ``--dask-workers`` take a list: one build a
value, then the speed-up of the most workers against the fewest (the snapshots must be the same
bytes, which is checked).

The dump repeats the sample's 206 pages (106 long articles, 99 redirects) as copies whose titles
are renamed ("Alabama (copy 17)"); every article link is remapped onto a sample article (chosen
by a hash of the original target) in the same copy, one in ten into another copy, so the link
graph is dense and connected, as in a full dump where most links resolve.
"""
from __future__ import annotations

import argparse
import bz2
import html
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zlib
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.snapshot.importers import XmlDumpReader
from pipeline.snapshot.page import canonical_title

SHARED = ROOT.parent / "shared" / "data" / "wikipedia"
SAMPLE = SHARED / "enwiki-sample-pages-articles.xml.bz2"
SAMPLE_ZIM = SHARED / "wikipedia_en_ray_charles.zim"
HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n  </siteinfo>\n")
LINK = re.compile(r"\[\[([^\[\]|#\n]+)((?:#[^\[\]|\n]*)?)((?:\|[^\[\]]*)?)\]\]")
REDIRECT = re.compile(r"^(\s*#\s*REDIRECT\s*:?\s*)\[\[([^\]|#]+)", re.IGNORECASE)


# ---- the synthetic dump ----------------------------------------------------------------------------

def sample_pages() -> list[dict]:
    pages = []
    for raw in XmlDumpReader(SAMPLE):
        el = ET.fromstring(raw.data)
        ns = el.findtext("ns") or "0"
        rev = el.findall("revision")[-1]
        red = el.find("redirect")
        pages.append({"title": el.findtext("title"), "ns": ns, "text": rev.findtext("text") or "",
                      "timestamp": rev.findtext("timestamp") or "", "redirect": red.get("title") if red is not None
                      else None})
    return pages


def _crc(s: str) -> int:
    return zlib.crc32(s.encode("utf-8"))


class Renamer:
    """Titles and links of copy ``k`` of the sample."""

    def __init__(self, pages: list[dict], copies: int):
        self.articles = sorted(canonical_title(p["title"]) for p in pages if p["ns"] == "0" and not p["redirect"])
        self.copies = copies

    def name(self, title: str, k: int) -> str:
        return f"{title} (copy {k})"

    def target(self, original: str, k: int) -> str:
        h = _crc(original)
        copy = k if h % 10 else (k + 1 + h // 10 % 3) % self.copies
        return self.name(self.articles[h % len(self.articles)], copy)

    def text(self, text: str, k: int) -> str:
        def link(m: re.Match) -> str:
            target = m.group(1).strip()
            if ":" in target or not target:
                return m.group(0)
            label = m.group(3) or "|" + m.group(1)
            return f"[[{self.target(canonical_title(target), k)}{m.group(2)}{label}]]"

        text = REDIRECT.sub(lambda m: m.group(1) + "[[" + self.target(canonical_title(m.group(2)), k), text)
        return LINK.sub(link, text)


def page_xml(p: dict, k: int, r: Renamer, page_id: int) -> str:
    esc = html.escape
    title = r.name(p["title"], k)
    red = f'    <redirect title="{esc(r.target(canonical_title(p["redirect"]), k))}" />\n' if p["redirect"] else ""
    return (f"  <page>\n    <title>{esc(title, quote=False)}</title>\n    <ns>{p['ns']}</ns>\n    <id>{page_id}</id>\n"
            f"{red}    <revision>\n      <id>{page_id}</id>\n      <timestamp>{p['timestamp']}</timestamp>\n"
            f'      <model>wikitext</model>\n      <format>text/x-wiki</format>\n      <text xml:space="preserve">'
            f"{esc(r.text(p['text'], k), quote=False)}</text>\n    </revision>\n  </page>\n")


def write_dump(path: Path, size_mb: float, compress: bool) -> dict:
    pages = sample_pages()
    copy_bytes = sum(len(page_xml(p, 0, Renamer(pages, 1), 1).encode()) for p in pages)
    copies = max(1, -(-int(size_mb * 1e6) // copy_bytes))
    r = Renamer(pages, copies)
    stats = {"pages": 0, "articles": 0, "redirects": 0, "bytes": 0, "copies": copies}
    target = size_mb * 1e6

    def chunks():
        yield HEAD.encode()
        stats["bytes"] += len(HEAD)
        page_id = 0
        for k in range(copies):
            block = []
            for p in pages:
                page_id += 1
                data = page_xml(p, k, r, page_id).encode()
                block.append(data)
                stats["bytes"] += len(data)
                stats["pages"] += 1
                stats["articles"] += p["ns"] == "0" and not p["redirect"]
                stats["redirects"] += p["redirect"] is not None
                if len(block) == 100:   # one bz2 stream per 100 pages, as Wikimedia's multistream dumps
                    yield b"".join(block)
                    block = []
            if block:
                yield b"".join(block)
            if stats["bytes"] >= target:
                break
        yield b"</mediawiki>\n"
        stats["bytes"] += len("</mediawiki>\n")

    with open(path, "wb") as f:
        if not compress:
            f.writelines(chunks())
            return stats
        with Pool(os.cpu_count() or 1) as pool:   # bounded batches: Pool.imap would read ahead without limit
            batch: list[bytes] = []
            for data in chunks():
                batch.append(data)
                if len(batch) == 32:
                    f.writelines(pool.map(bz2.compress, batch))
                    batch = []
            f.writelines(pool.map(bz2.compress, batch))
    return stats


# ---- a synthetic ZIM ---------------------------------------------------------------------------

def write_zim(path: Path, size_mb: float) -> dict:
    """Copies of the Ray Charles archive's articles (paths renamed, hrefs remapped) and redirects."""
    from libzim.reader import Archive
    from libzim.writer import Creator, Hint, Item, StringProvider

    src = Archive(str(SAMPLE_ZIM))
    articles, redirects = [], []
    for i in range(src.all_entry_count):
        e = src._get_entry_by_id(i)
        if not e.path.startswith("A/") or e.path == "A/index":
            continue
        if e.is_redirect:
            redirects.append((e.path[2:], e.get_redirect_entry().path[2:]))
        elif e.get_item().mimetype.startswith("text/html"):
            articles.append((e.path[2:], e.title, bytes(e.get_item().content).decode("utf-8", "replace")))
    names = {p for p, _, _ in articles}
    copy_bytes = sum(len(h.encode()) for _, _, h in articles)
    copies = max(1, -(-int(size_mb * 1e6) // copy_bytes))
    href = re.compile(r'href="([^"#?]+)')

    class Page(Item):
        def __init__(self, path, title, content):
            super().__init__()
            self.p, self.t, self.c = path, title, content

        def get_path(self):
            return self.p

        def get_title(self):
            return self.t

        def get_mimetype(self):
            return "text/html"

        def get_contentprovider(self):
            return StringProvider(self.c)

        def get_hints(self):
            return {Hint.FRONT_ARTICLE: True}

    stats = {"articles": 0, "redirects": 0, "bytes": 0, "copies": copies}
    with Creator(str(path)).config_indexing(False, "eng") as creator:
        creator.set_mainpath(f"{articles[0][0]}_copy_0")
        for key, value in (("Title", "synthetic"), ("Language", "eng"), ("Date", "2020-03-31")):
            creator.add_metadata(key, value)
        for k in range(copies):
            def remap(m, k=k):
                target = m.group(1)
                if target in names:
                    j = k if _crc(target) % 10 else (k + 1) % copies
                    return f'href="{target}_copy_{j}'
                return m.group(0)

            for p, title, content in articles:
                text = href.sub(remap, content)
                creator.add_item(Page(f"{p}_copy_{k}", f"{title} (copy {k})", text))
                stats["articles"] += 1
                stats["bytes"] += len(text.encode())
            for alias, target in redirects:
                creator.add_redirection(f"{alias}_copy_{k}", alias, f"{target}_copy_{k}", {})
                stats["redirects"] += 1
    return stats


# ---- measuring a build -------------------------------------------------------------------------

def _tree(pid: int) -> list[int]:
    try:
        import psutil

        proc = psutil.Process(pid)
        return [pid] + [c.pid for c in proc.children(recursive=True)]
    except Exception:  # noqa: BLE001 - psutil missing or the process gone: the main process alone
        return [pid]


def _memory(pid: int) -> tuple[int, int]:
    """(PSS, RSS) in bytes of one process (PSS counts pages shared with forked workers once)."""
    pss = rss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                pss = int(line.split()[1]) * 1024
            elif line.startswith("Rss:"):
                rss = int(line.split()[1]) * 1024
    except OSError:
        pass
    return pss, rss


def measure(source: Path, out: Path, workers: int | None, dask_workers: int | None = None) -> dict:
    cmd = [sys.executable, "-m", "pipeline.snapshot", "build", "--from", str(source), "--out", str(out), "--fresh"]
    if workers:
        cmd += ["--workers", str(workers)]
    if dask_workers:
        cmd += ["--dask-workers", str(dask_workers)]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[tuple[float, str]] = []

    def read():
        for line in proc.stdout:
            lines.append((time.monotonic() - started, line.rstrip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    peak_pss = peak_rss = 0
    while proc.poll() is None:
        pss = rss = 0
        for pid in _tree(proc.pid):
            p, r = _memory(pid)
            pss, rss = pss + p, rss + r
        peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
        time.sleep(0.5)
    wall = time.monotonic() - started
    reader.join(timeout=5)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    writing = next((t for t, line in lines if line.startswith("writing ")), None)
    return {"ok": proc.returncode == 0, "wall": wall, "import": writing, "lines": lines, "load": load,
            "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "peak_pss": peak_pss, "peak_rss": peak_rss, "max_single_rss": after.ru_maxrss * 1024}


def report(kind: str, stats: dict, m: dict, out: Path, workers: int | None, label: str = "") -> None:
    mb = stats["bytes"] / 1e6
    what = (f"{stats['articles']} articles, {stats['redirects']} redirects, {stats['copies']} copies of the sample"
            if "copies" in stats else f"{stats['pages']} pages")
    print(f"{kind}: {mb:.1f} MB ({what}), {label or 'workers ' + str(workers or 'default')}"
          f" (load average {m.get('load', 0):.1f} at the start)")
    if not m["ok"]:
        print("  build FAILED:\n    " + "\n    ".join(line for _, line in m["lines"][-15:]))
        return
    manifest = json.loads((out / "manifest.json").read_text())
    pages = manifest["counts"]["pages"]
    print(f"  wall {m['wall']:.1f} s: {mb / m['wall']:.2f} MB/s, {pages / m['wall']:.1f} pages/s "
          f"({pages} pages in the snapshot)")
    if m["import"]:
        print(f"  import {m['import']:.1f} s ({mb / m['import']:.2f} MB/s), final pass "
              f"{m['wall'] - m['import']:.1f} s")
    print(f"  CPU {m['cpu']:.1f} s user+sys over all processes ({mb / m['cpu']:.2f} MB per CPU-second)")
    print(f"  peak memory: {m['peak_pss'] / 2**20:.0f} MB PSS summed over the build's processes "
          f"({m['peak_rss'] / 2**20:.0f} MB RSS summed; largest single process {m['max_single_rss'] / 2**20:.0f} MB)")
    print(f"  pages.sqlite {(out / 'pages.sqlite').stat().st_size / 1e6:.0f} MB, links inside "
          f"{manifest['counts']['links_in_snapshot']} of {manifest['counts']['links']}")


def dump_stats(dump: Path) -> dict:
    """XML bytes and pages of a dump made elsewhere (read once, not timed)."""
    size = pages = 0
    for raw in XmlDumpReader(dump):
        pages, size = raw.index, raw.end
    return {"bytes": size, "pages": pages}


def _counts(text: str | None) -> list[int | None]:
    return [int(v) for v in text.split(",")] if text else [None]


def compare(dump: Path, stats: dict, out_dir: Path, workers: list, dask: bool) -> None:
    """One build a worker count; the speed-up of the most against the fewest, the bytes checked equal."""
    walls, hashes = {}, set()
    for n in workers:
        out = out_dir / f"snapshot-{'dask' if dask else 'pool'}-{n}"
        m = measure(dump, out, None if dask else n, n if dask else None)
        report("XML dump", stats, m, out, n, f"{'Dask workers' if dask else 'workers'} {n}")
        if m["ok"]:
            walls[n] = m["wall"]
            hashes.add(json.loads((out / "manifest.json").read_text())["hash"])
        shutil.rmtree(out, ignore_errors=True)
    if len(walls) > 1:
        lo, hi = min(walls), max(walls)
        print(f"{'Dask' if dask else 'process pool'}: {hi} workers against {lo}: {walls[lo] / walls[hi]:.2f}x "
              f"({walls[lo]:.1f} s / {walls[hi]:.1f} s), snapshots {'the same bytes' if len(hashes) == 1 else 'DIFFER'}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=2048, help="XML dump size (0: no dump)")
    ap.add_argument("--zim-mb", type=float, default=0, help="HTML in a synthetic ZIM (0: no ZIM)")
    ap.add_argument("--workers", default=None, help="passed to snapshot build (default: every core); with --dump, "
                    "a list (1,2) compares them")
    ap.add_argument("--dask-workers", default=None, help="with --dump: local Dask clusters of these sizes (1,2)")
    ap.add_argument("--dump", type=Path, default=None, help="measure this dump instead of making one")
    ap.add_argument("--bz2", action="store_true", help="compress the dump (multistream .xml.bz2)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/legwork-import-speed"))
    ap.add_argument("--keep", action="store_true", help="keep the dump and the snapshot")
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(a.dir).free / 1e9
    print(f"{a.dir}: {free:.0f} GB free; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if a.dump is not None:
        stats = dump_stats(a.dump)
        print(f"{a.dump}: {a.dump.stat().st_size / 1e6:.0f} MB on disk, {stats['bytes'] / 1e6:.0f} MB of XML, "
              f"{stats['pages']} pages")
        if a.workers or not a.dask_workers:
            compare(a.dump, stats, a.dir, _counts(a.workers), dask=False)
        if a.dask_workers:
            compare(a.dump, stats, a.dir, _counts(a.dask_workers), dask=True)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
        return 0
    if not SAMPLE.is_file():
        print(f"no sample dump at {SAMPLE}")
        return 0
    workers = _counts(a.workers)[0]
    try:
        if a.size_mb > 0:
            dump = a.dir / ("synthetic.xml.bz2" if a.bz2 else "synthetic.xml")
            t = time.monotonic()
            stats = write_dump(dump, a.size_mb, a.bz2)
            print(f"wrote {dump} ({dump.stat().st_size / 1e6:.0f} MB on disk) in {time.monotonic() - t:.0f} s")
            out = a.dir / "snapshot"
            m = measure(dump, out, workers)
            report("XML dump" + (" (bz2)" if a.bz2 else ""), stats, m, out, workers)
        if a.zim_mb > 0:
            zim = a.dir / "synthetic.zim"
            zim.unlink(missing_ok=True)
            t = time.monotonic()
            stats = write_zim(zim, a.zim_mb)
            print(f"wrote {zim} ({zim.stat().st_size / 1e6:.0f} MB on disk) in {time.monotonic() - t:.0f} s")
            out = a.dir / "snapshot-zim"
            m = measure(zim, out, workers)
            report("ZIM (HTML bytes)", stats, m, out, workers)
        print(f"load average after: {os.getloadavg()[0]:.1f}")
    finally:
        if not a.keep:
            shutil.rmtree(a.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
