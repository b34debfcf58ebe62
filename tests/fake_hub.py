"""A local stand-in for the Hugging Face Hub API, for the publish tests (no network).

It implements only the endpoints ``huggingface_hub`` (2.x) calls for ``create_repo``,
``create_branch`` and ``upload_folder`` of regular (non-LFS) files:

    POST /api/repos/create                                 create_repo
    POST /api/{type}s/{org}/{name}/branch/{branch}         create_branch
    GET  /api/{type}s/{org}/{name}/tree/{rev}[/{path}]     list_repo_files (upload_folder's delete_patterns)
    POST /api/{type}s/{org}/{name}/preupload/{rev}         upload modes: every file is answered "regular"
    POST /api/{type}s/{org}/{name}/commit/{rev}            the ndjson commit (header, file, deletedFile)
    POST /api/validate-yaml                                README metadata check before a commit
    GET  /api/agent-harnesses                              the client's best-effort telemetry registry (empty)

Because every file is answered "regular", contents travel base64-encoded inside the commit and
no LFS batch or Xet storage protocol is exercised. Every request must carry ``Bearer <token>``.
``fail_next`` makes the next N requests to an endpoint answer 503 (echoing the Authorization header
in the error body, as a careless server might, so the client's redaction is tested too).
"""
from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self
from urllib.parse import unquote, urlsplit

from live_http import send_json

REPO = r"(?P<type>model|dataset|space)s/(?P<repo>[^/]+/[^/]+)"


@dataclass
class Commit:
    revision: str
    summary: str
    description: str
    added: list[str]
    deleted: list[str]
    oid: str


@dataclass
class Repo:
    repo_type: str
    private: bool
    branches: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"main": {}})
    commits: list[Commit] = field(default_factory=list)


class FakeHub:
    def __init__(self, token: str):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []       # (method, path) of every request
        self.unhandled: list[tuple[str, str]] = []
        self.fail_next: dict[str, int] = {}             # endpoint name -> failures still to give
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):       # keep test output clean
                pass

            def do_GET(self):
                hub._dispatch(self, "GET")

            def do_POST(self):
                hub._dispatch(self, "POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- plumbing ---------------------------------------------------------------------------
    def _dispatch(self, h: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(h.path)
        path = unquote(parts.path)
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        with self.lock:
            self.requests.append((method, path))
        routes = [
            ("POST", r"/api/repos/create", "create", self._create),
            ("POST", rf"/api/{REPO}/branch/(?P<branch>[^/]+)", "branch", self._branch),
            ("GET", rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<sub>.*))?", "tree", self._tree),
            ("POST", rf"/api/{REPO}/preupload/(?P<rev>[^/]+)", "preupload", self._preupload),
            ("POST", rf"/api/{REPO}/commit/(?P<rev>[^/]+)", "commit", self._commit),
            ("POST", r"/api/validate-yaml", "validate-yaml", lambda m, b: (200, {"errors": [], "warnings": []})),
        ]
        if method == "GET" and path == "/api/agent-harnesses":   # best-effort client telemetry: empty registry
            return self._send(h, 200, {"standardEnvVars": [], "harnesses": {}})
        for verb, pattern, name, handler in routes:
            m = re.fullmatch(pattern, path)
            if verb != method or not m:
                continue
            auth = h.headers.get("Authorization", "")
            if auth != f"Bearer {self.token}":
                return self._send(h, 401, {"error": "Invalid credentials in Authorization header"})
            with self.lock:
                failing = self.fail_next.get(name, 0)
                if failing:
                    self.fail_next[name] = failing - 1
            if failing:
                return self._send(h, 503, {"error": f"Service temporarily unavailable (request had {auth})"})
            with self.lock:
                status, payload = handler(m, body)
            return self._send(h, status, payload)
        with self.lock:
            self.unhandled.append((method, path))
        self._send(h, 404, {"error": f"fake hub: no endpoint {method} {path}"})

    _send = staticmethod(send_json)

    def _repo(self, m) -> Repo | None:
        repo = self.repos.get(m["repo"])
        return repo if repo is not None and repo.repo_type == m["type"] else None

    # ---- endpoints --------------------------------------------------------------------------
    def _create(self, m, body):
        req = json.loads(body or b"{}")
        repo_id = f"{req['organization']}/{req['name']}" if req.get("organization") else req["name"]
        if repo_id in self.repos:
            return 409, {"error": "You already created this dataset repo", "url": f"{self.url}/datasets/{repo_id}"}
        repo_type = req.get("type") or "model"
        self.repos[repo_id] = Repo(repo_type, req.get("visibility") == "private" or bool(req.get("private")))
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        return 200, {"url": f"{self.url}/{prefix}{repo_id}", "name": repo_id}

    def _branch(self, m, body):
        repo = self._repo(m)
        if repo is None:
            return 404, {"error": "Repository not found"}
        if m["branch"] in repo.branches:
            return 409, {"error": "Branch already exists"}
        start = json.loads(body or b"{}").get("startingPoint") or "main"
        repo.branches[m["branch"]] = dict(repo.branches.get(start, {}))
        return 200, {}

    def _tree(self, m, body):
        repo = self._repo(m)
        if repo is None or m["rev"] not in repo.branches:
            return 404, {"error": "Revision not found"}
        sub = (m["sub"] or "").strip("/")
        files = repo.branches[m["rev"]]
        return 200, [{"type": "file", "path": p, "size": len(b), "oid": git_blob_oid(b)}
                     for p, b in sorted(files.items()) if not sub or p.startswith(sub + "/")]

    def _preupload(self, m, body):
        repo = self._repo(m)
        if repo is None or m["rev"] not in repo.branches:
            return 404, {"error": "Repository not found"}
        files = repo.branches[m["rev"]]
        return 200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                "oid": git_blob_oid(files[f["path"]]) if f["path"] in files else None}
                               for f in json.loads(body)["files"]]}

    def _commit(self, m, body):
        repo = self._repo(m)
        if repo is None or m["rev"] not in repo.branches:
            return 404, {"error": "Repository or revision not found"}
        header, added, deleted = {}, {}, []
        for line in body.splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                header = item["value"]
            elif item["key"] == "file":
                v = item["value"]
                if v.get("encoding") != "base64":
                    return 400, {"error": f"unsupported encoding {v.get('encoding')!r}"}
                added[v["path"]] = base64.b64decode(v["content"])
            elif item["key"] in ("deletedFile", "deletedFolder"):
                deleted.append(item["value"]["path"])
            else:
                return 400, {"error": f"fake hub does not support {item['key']!r} (LFS/Xet) operations"}
        files = repo.branches[m["rev"]]
        for p in deleted:
            files.pop(p, None)
        files.update(added)
        oid = hashlib.sha1(json.dumps([header, sorted(added), deleted, len(repo.commits)]).encode()).hexdigest()
        repo.commits.append(Commit(m["rev"], header.get("summary", ""), header.get("description", ""),
                                   sorted(added), sorted(deleted), oid))
        return 200, {"commitUrl": f"{self.url}/{m['type']}s/{m['repo']}/commit/{oid}", "commitOid": oid,
                     "pullRequestUrl": None}


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob (what the hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
