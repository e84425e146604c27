"""A Hugging Face Hub imitation on 127.0.0.1 for the `hf://` split tests.

It speaks the endpoints `huggingface_hub.HfFileSystem` calls (read from the
library's source: hf_file_system.py, hf_api.py, file_download.py), so the
real client runs unchanged against it, pointed here by `HF_ENDPOINT`:

* `GET /api/datasets/{org}/{name}` and `.../revision/{rev}`: the repository
  at a branch or commit (`HfApi.dataset_info`, which `HfFileSystem.resolve_path`
  calls to learn whether the repository and revision exist);
* `GET /api/datasets/{org}/{name}/tree/{rev}[/{path}]?recursive=&expand=`:
  a folder's entries (`list_repo_tree`, behind `ls`, `info`, `glob`);
* `POST /api/datasets/{org}/{name}/paths-info/{rev}`: entries by path;
* `GET|HEAD /datasets/{org}/{name}/resolve/{rev}/{path}`: a file's bytes with
  `Range`, `ETag`, `X-Repo-Commit`; an LFS file (Parquet, gzip) answers 302 to
  `/cdn-lfs/{sha256}` with `X-Linked-Size` and `X-Linked-Etag`, as the Hub
  sends large files to its CDN.

Errors carry the Hub's `X-Error-Code` header (`RepoNotFound`,
`RevisionNotFound`, `EntryNotFound`, `GatedRepo`), which the client turns into
its own exceptions. A gated repository lists its files but answers 403 for
their bytes until access is granted. A repository may be private: then only `Authorization: Bearer
{token}` opens it, anything else is 401 `RepoNotFound`, as on the Hub.
Every request is recorded (method, path, Range, status, body bytes sent);
requests whose path holds a part in `stall` wait until `release` is set.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, unquote, urlsplit

from object_store import LocalServer

#: Files stored through LFS on the Hub (its default .gitattributes covers these).
LFS_SUFFIXES = (".parquet", ".gz", ".arrow")


@dataclass
class Request:
    method: str
    path: str  # unquoted path of the URL
    query: str
    range: str | None
    authorization: str | None
    status: int = 0
    sent: int = 0  # body bytes sent back


@dataclass
class Repo:
    private: bool = False
    commits: dict = field(default_factory=dict)  # sha -> {path: bytes}
    branches: dict = field(default_factory=dict)  # name -> sha


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubServer(LocalServer):
    """The Hub's read API for datasets; `url` is what `HF_ENDPOINT` names."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token  # what opens the private repositories
        self.repos: dict[str, Repo] = {}
        self.gated: set[str] = set()  # repositories whose files answer 403 GatedRepo (access not granted)
        self.stall: set[str] = set()  # parts of request paths answered only once `release` is set
        self.release = threading.Event()
        self.blobs: dict[str, bytes] = {}  # sha256 -> bytes, for /cdn-lfs/
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._commits = 0
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                hub._handle(self, body=True)

            def do_HEAD(self) -> None:
                hub._handle(self, body=False)

            def do_POST(self) -> None:
                hub._handle(self, body=True)

        self._listen(Handler)

    # ------------------------------------------------------------------ set-up

    def commit(self, repo_id: str, files: dict[str, bytes], *, branch: str = "main", private: bool = False,
               delete: tuple[str, ...] = ()) -> str:
        """Commit `files` (added or replaced) to `repo_id`'s `branch`; returns the new commit's 40-hex id."""
        with self._lock:
            repo = self.repos.setdefault(repo_id, Repo(private=private))
            repo.private = private or repo.private
            parent = repo.branches.get(branch)
            tree = dict(repo.commits[parent]) if parent else {}
            for path in delete:
                tree.pop(path, None)
            tree.update(files)
            self._commits += 1
            sha = hashlib.sha1(f"{repo_id}:{self._commits}:{sorted(tree)}".encode()).hexdigest()
            repo.commits[sha] = tree
            repo.branches[branch] = sha
            for data in files.values():
                self.blobs[hashlib.sha256(data).hexdigest()] = data
            return sha

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def body_gets(self) -> list[Request]:
        """GETs that sent file bytes (from /resolve/ or the CDN), not listings or metadata."""
        return [r for r in self.requests if r.method == "GET" and r.sent and ("/resolve/" in r.path or r.path.startswith("/cdn-lfs/"))]

    # ------------------------------------------------------------------ answers

    def _handle(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        parts = urlsplit(handler.path)
        record = Request(handler.command, unquote(parts.path), parts.query, handler.headers.get("Range"),
                         handler.headers.get("Authorization"))
        with self._lock:
            self.requests.append(record)
        length = int(handler.headers.get("Content-Length") or 0)
        form = handler.rfile.read(length) if length else b""
        if any(part in record.path for part in self.stall):
            self.release.wait(600)  # a Hub that stalls: the client's budget must end this
        try:
            status, headers, payload = self._route(handler.command, parts.path, parse_qs(parts.query), form, handler.headers)
        except Exception as error:  # a bug in the imitation is a 500, visible in the test
            status, headers, payload = 500, {"Content-Type": "text/plain"}, repr(error).encode()
        record.status = status
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if body and handler.command != "HEAD" and payload:
            handler.wfile.write(payload)
            record.sent = len(payload) if status in (200, 206) else 0

    def _route(self, method: str, raw_path: str, query: dict, form: bytes, headers) -> tuple[int, dict, bytes]:
        if raw_path.startswith("/cdn-lfs/"):
            data = self.blobs.get(raw_path[len("/cdn-lfs/"):])
            if data is None:
                return _error(404, "EntryNotFound", "Entry not found")
            return _content(data, headers.get("Range"), {"ETag": f'"{hashlib.sha256(data).hexdigest()}"'})
        match = re.fullmatch(r"/api/datasets/([^/]+)/([^/]+)(?:/(revision|tree|paths-info)/([^/]+)(/.*)?)?", raw_path)
        if match:
            org, name, kind, rev, rest = match.groups()
            repo_id = f"{org}/{name}"
            denied = self._denied(repo_id, headers)
            if denied:
                return denied
            sha, problem = self._revision(repo_id, unquote(rev) if rev else "main")
            if problem:
                return problem
            tree = self.repos[repo_id].commits[sha]
            if kind in (None, "revision") and rest is None:
                return _json({
                    "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24], "id": repo_id, "author": org, "sha": sha,
                    "private": self.repos[repo_id].private, "gated": False, "disabled": False,
                    "lastModified": "2026-11-01T12:00:00.000Z", "createdAt": "2026-01-01T12:00:00.000Z",
                    "tags": [], "downloads": 0, "likes": 0,
                    "siblings": [{"rfilename": path} for path in sorted(tree)],
                })
            if kind == "tree":
                folder = unquote(rest[1:]) if rest else ""
                recursive = (query.get("recursive") or ["false"])[0].lower() == "true"
                return self._tree(tree, folder.strip("/"), recursive)
            if kind == "paths-info" and method == "POST":
                wanted = parse_qs(form.decode())
                paths = wanted.get("paths", [])
                entries = [entry for entry in self._entries(tree, "", recursive=True) if entry["path"] in paths]
                return _json(entries)
            return _error(404, None, "Not found")
        match = re.fullmatch(r"/datasets/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)", raw_path)
        if match and method in ("GET", "HEAD"):
            org, name, rev, path = match.groups()
            repo_id = f"{org}/{name}"
            denied = self._denied(repo_id, headers)
            if denied:
                return denied
            sha, problem = self._revision(repo_id, unquote(rev))
            if problem:
                return problem
            data = self.repos[repo_id].commits[sha].get(unquote(path))
            if data is None:
                return _error(404, "EntryNotFound", "Entry not found")
            if repo_id in self.gated:
                return _error(403, "GatedRepo", f"Access to dataset {repo_id} is restricted and you are not in the authorized list.")
            common = {"X-Repo-Commit": sha, "Accept-Ranges": "bytes"}
            if _is_lfs(path):
                digest = hashlib.sha256(data).hexdigest()
                return 302, {**common, "Location": f"{self.url}/cdn-lfs/{digest}", "ETag": f'"{digest}"',
                             "X-Linked-Size": str(len(data)), "X-Linked-Etag": f'"{digest}"'}, b""
            return _content(data, headers.get("Range"), {**common, "ETag": f'"{git_blob_id(data)}"'})
        return _error(404, None, "Not found")

    def _denied(self, repo_id: str, headers):
        repo = self.repos.get(repo_id)
        if repo is None:
            return _error(404, "RepoNotFound", "Repository not found")
        if repo.private and headers.get("Authorization") != f"Bearer {self.token}":
            return _error(401, "RepoNotFound", "Repository not found")
        return None

    def _revision(self, repo_id: str, rev: str):
        repo = self.repos[repo_id]
        if rev in repo.commits:
            return rev, None
        if rev in repo.branches:
            return repo.branches[rev], None
        return None, _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")

    def _tree(self, tree: dict, folder: str, recursive: bool):
        if folder and folder in tree:
            return _error(404, "EntryNotFound", f"{folder} is a file, not a folder")
        if folder and not any(path.startswith(folder + "/") for path in tree):
            return _error(404, "EntryNotFound", f"Entry not found: {folder}")
        return _json(self._entries(tree, folder, recursive))

    def _entries(self, tree: dict, folder: str, recursive: bool) -> list[dict]:
        prefix = folder + "/" if folder else ""
        files, folders = [], set()
        for path in sorted(tree):
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix):].split("/")
            if len(rest) > 1:
                for depth in range(1, len(rest) if recursive else 2):
                    folders.add(prefix + "/".join(rest[:depth]))
                if not recursive:
                    continue
            files.append(_file_entry(path, tree[path]))
        directories = [{"type": "directory", "oid": hashlib.sha1(name.encode()).hexdigest(), "size": 0, "path": name}
                       for name in sorted(folders)]
        return directories + files


def _is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def _file_entry(path: str, data: bytes) -> dict:
    entry = {"type": "file", "oid": git_blob_id(data), "size": len(data), "path": path}
    if _is_lfs(path):
        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 134}
    return entry


def _json(value) -> tuple[int, dict, bytes]:
    return 200, {"Content-Type": "application/json; charset=utf-8"}, json.dumps(value).encode()


def _error(status: int, code: str | None, message: str) -> tuple[int, dict, bytes]:
    headers = {"Content-Type": "application/json; charset=utf-8", "X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return status, headers, json.dumps({"error": message}).encode()


def _content(data: bytes, range_header: str | None, headers: dict) -> tuple[int, dict, bytes]:
    match = re.fullmatch(r"bytes=(\d+)-(\d*)", range_header or "")
    if not match:
        return 200, {**headers, "Content-Type": "application/octet-stream"}, data
    start = int(match.group(1))
    end = min(len(data), int(match.group(2)) + 1) if match.group(2) else len(data)
    if start >= len(data):
        return 416, {**headers, "Content-Range": f"bytes */{len(data)}"}, b""
    return 206, {**headers, "Content-Type": "application/octet-stream",
                 "Content-Range": f"bytes {start}-{end - 1}/{len(data)}"}, data[start:end]


def hf_uri(repo_id: str, revision: str, path: str) -> str:
    """The pinned split path: hf://datasets/ORG/NAME@REVISION/PATH (huggingface_hub's own form)."""
    return f"hf://datasets/{repo_id}@{quote(revision, safe='')}/{path}"
