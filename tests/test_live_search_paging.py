"""The live web_search pages as the offline one does (issue 33): offset or page, total and next_offset from
MediaWiki; what a live service cannot do (modes, fields, paging through Serper) is a clear ToolError."""
from __future__ import annotations

from live_http import Answer, ScriptedServer

from pipeline.config import load_settings
from pipeline.tools.registry import Toolbox


def make_toolbox(server: ScriptedServer, tmp_path, **live) -> Toolbox:
    urls = {"mediawiki_api_url": f"{server.url}/w/api.php", "serper_url": f"{server.url}/serper",
            "http_backoff_s": 0, "http_retries": 2, "serper_key": "", **live}
    return Toolbox(load_settings(env={}, default_backend="live", cache_path=tmp_path / "cache.sqlite",
                                 snapshot_dir=tmp_path / "snap", live=urls))


def test_mediawiki_pages_with_sroffset_and_says_the_end(tmp_path):
    answer = {"batchcomplete": True, "query": {"searchinfo": {"totalhits": 12},
                                               "search": [{"ns": 0, "title": "Ulm", "pageid": 2, "snippet": "Ulm"}]}}
    with ScriptedServer({"/w/api.php": Answer(200, answer)}) as server:
        data = make_toolbox(server, tmp_path).call("web_search", {"query": "Ulm", "num_results": 4, "page": 3}).data
        sent = server.hits("/w/api.php")[0].query
    assert (sent["sroffset"], sent["srlimit"]) == ("8", "4")
    assert data["results"][0]["rank"] == 9 and data["total"] == 12 and data["next_offset"] is None   # no continue: the end


def test_what_the_live_search_cannot_do_is_refused(tmp_path):
    with ScriptedServer({}) as server:
        toolbox = make_toolbox(server, tmp_path)
        phrase = toolbox.call("web_search", {"query": "Sahara", "mode": "phrase", "field": "lead"})
        assert not phrase.ok and "live backend" in phrase.error
    with ScriptedServer({}) as server:
        serper = make_toolbox(server, tmp_path, serper_key="sk").call("web_search", {"query": "Ulm", "offset": 5})
        assert not serper.ok and "Serper" in serper.error
