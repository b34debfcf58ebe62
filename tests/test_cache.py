"""The record/replay cache: exact bytes, first writer wins, several processes, clear misses."""
from __future__ import annotations

import json
import multiprocessing
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cache import CallCache, RecentAnswers, ReplayMiss, cached_call, canonical_json, content_key


def _answer(value):
    def compute():
        return canonical_json(value), "offline-data", True, None
    return compute


def test_canonical_json_is_order_independent_and_strict():
    assert canonical_json({"b": 1, "a": [1.5, "é"]}) == canonical_json({"a": [1.5, "é"], "b": 1}) \
        == '{"a":[1.5,"é"],"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_content_key_depends_on_every_part():
    base = content_key("tool", "maps_geocode", {"address": "Ulm"}, "offline/world-1/abc")
    assert base == content_key("tool", "maps_geocode", {"address": "Ulm"}, "offline/world-1/abc")
    others = {content_key("llm", "maps_geocode", {"address": "Ulm"}, "offline/world-1/abc"),
              content_key("tool", "maps_elevation", {"address": "Ulm"}, "offline/world-1/abc"),
              content_key("tool", "maps_geocode", {"address": "Ulm "}, "offline/world-1/abc"),
              content_key("tool", "maps_geocode", {"address": "Ulm"}, "live")}
    assert base not in others and len(others) == 4


def test_replay_gives_the_recorded_bytes(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    value = {"z": 1, "a": {"nested": [3, 2, 1]}, "text": "Ulm – Münster"}
    recorded, served = cached_call(cache, kind="tool", name="t", request={"q": 1}, namespace="ns",
                                   mode="offline", compute=_answer(value))
    assert served == "computed" and recorded == canonical_json(value)
    fresh = CallCache(tmp_path / "c.sqlite")  # a new process would open it like this
    replayed, served = cached_call(fresh, kind="tool", name="t", request={"q": 1}, namespace="ns", mode="replay",
                                   compute=lambda: pytest.fail("replay must not compute"))
    assert served == "replay" and replayed.encode("utf-8") == recorded.encode("utf-8")


def test_cached_answer_is_reused_without_computing(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    cached_call(cache, kind="tool", name="t", request={}, namespace="ns", mode="offline", compute=_answer(1))
    response, served = cached_call(cache, kind="tool", name="t", request={}, namespace="ns", mode="offline",
                                   compute=lambda: pytest.fail("should be cached"))
    assert (response, served) == ("1", "cache")


def test_replay_miss_names_the_call(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    with pytest.raises(ReplayMiss) as caught:
        cached_call(cache, kind="tool", name="maps_elevation", request={"locations": {"lat": 1, "lng": 2}},
                    namespace="offline/world-1/xyz", mode="replay", compute=_answer(0))
    message = str(caught.value)
    assert "maps_elevation" in message and '{"locations":{"lat":1,"lng":2}}' in message
    assert "offline/world-1/xyz" in message
    assert cache.count() == 0


def test_first_writer_wins(tmp_path):
    cache = CallCache(tmp_path / "c.sqlite")
    key = content_key("tool", "t", {}, "ns")
    for response in ("first", "second"):
        cache.put(key, kind="tool", name="t", namespace="ns", request={}, response=response,
                  provenance="offline-data", ok=True)
    assert cache.get(key).response == "first" and cache.count() == 1


def test_cache_pickles_by_path(tmp_path):
    import pickle

    cache = CallCache(tmp_path / "c.sqlite")
    cached_call(cache, kind="tool", name="t", request={}, namespace="ns", mode="offline", compute=_answer(7))
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.path == cache.path and copy.count() == 1


def _writer(path: str, worker: int, n: int) -> None:
    cache = CallCache(path)
    for i in range(n):
        # Half the keys are shared by every worker (contended), half are the worker's own.
        shared = i % 2 == 0
        request = {"i": i} if shared else {"i": i, "worker": worker}
        cached_call(cache, kind="tool", name="t", request=request, namespace="ns", mode="offline",
                    compute=_answer({"i": i, "by": worker, "shared": shared}))


def test_concurrent_writers_from_several_processes(tmp_path):
    path = str(tmp_path / "c.sqlite")
    CallCache(path)
    workers, n = 4, 60
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, n)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0] * workers
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT request, response FROM records").fetchall()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    shared = n // 2
    assert len(rows) == shared + workers * (n - shared)
    # Every record is one complete answer for its request.
    import json
    for request, response in rows:
        assert json.loads(response)["i"] == json.loads(request)["i"]


def _open_at_once(path, barrier, results):
    barrier.wait()
    try:
        CallCache(path).put("k", kind="tool", name="n", namespace="x", request={}, response="1",
                            provenance="snapshot", ok=True)
        results.put(None)
    except sqlite3.Error as err:
        results.put(repr(err))


def test_processes_creating_one_new_cache_at_once_all_open_it(tmp_path):
    """A Dask release's workers create the shared cache together: switching a new file into WAL
    raised 'database is locked' in about one start in three of 8 processes before it was retried."""
    ctx = multiprocessing.get_context("fork")
    errors = []
    for trial in range(12):
        barrier, results = ctx.Barrier(8), ctx.Queue()
        procs = [ctx.Process(target=_open_at_once, args=(tmp_path / f"c{trial}.sqlite", barrier, results))
                 for _ in range(8)]
        for p in procs:
            p.start()
        errors += [e for e in (results.get(timeout=120) for _ in procs) if e]
        for p in procs:
            p.join()
    assert errors == []


# ---- the answers a process keeps in memory (RecentAnswers, Toolbox) --------------------------------
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.text(min_size=1, max_size=40)), max_size=80),
       st.integers(1, 200))
def test_recent_answers_stay_within_their_bytes_and_drop_the_least_recent(puts, max_bytes):
    recent = RecentAnswers(max_bytes)
    model: dict[int, str] = {}   # the same rules, written out plainly: insertion order is recency
    for key, text in puts:
        got = recent.get(key)
        assert got == model.get(key)
        if got is not None:
            model[key] = model.pop(key)
        elif len(text) <= max_bytes:
            model[key] = text
            while sum(map(len, model.values())) > max_bytes:
                del model[next(iter(model))]
        recent.put(key, text)
    assert {k: recent.get(k) for k in range(31) if recent.get(k) is not None} == model
    assert sum(map(len, model.values())) <= max_bytes


def test_a_toolbox_answers_again_from_memory_and_a_new_one_from_the_record(tmp_path):
    from pipeline.config import load_settings
    from pipeline.tools.registry import Toolbox
    settings = load_settings(env={}, cache_path=tmp_path / "c.sqlite")
    box = Toolbox(settings)
    first = box.call("maps_geocode", {"address": "Ulm"})
    assert first.served_from == "computed"
    with sqlite3.connect(tmp_path / "c.sqlite") as db:   # the record goes: memory alone can answer now
        db.execute("DELETE FROM records")
    again = box.call("maps_geocode", {"address": "Ulm"})
    assert (again.served_from, again.response_json) == ("cache", first.response_json)
    assert again.data == json.loads(first.response_json)
    again.data.clear()   # a caller's own copy: changing it changes no later answer
    third = box.call("maps_geocode", {"address": "Ulm"})
    assert third.served_from == "cache" and third.data == json.loads(first.response_json)
    fresh = Toolbox(settings).call("maps_geocode", {"address": "Ulm"})   # another process: nothing in memory
    assert (fresh.served_from, fresh.response_json) == ("computed", first.response_json)
