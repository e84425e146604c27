"""A GitHub REST API stand-in on 127.0.0.x: issue comments (list with pagination, create, update)
and pull request reviews (list, paginated as GitHub does: `per_page` up to 100, default 30,
`Link` headers to `/repositories/{id}/...` with rel="next" and rel="last").

Answers have the shapes of the real API (review objects with `user`, `state`,
`commit_id` (the head the review was of), `submitted_at`, `author_association`; errors as `{"message",
"documentation_url", "status"}`). `server.add_pull(12, author="bob")`,
`server.add_review(12, "alice", "APPROVED")`; a pull request that was not
added answers 404, as for a token that cannot see it.

The token has an identity, like GitHub's: `FakeGitHub(token)` is the workflow's
GITHUB_TOKEN (GET /user answers 403 "Resource not accessible by integration",
comments it writes are by `github-actions[bot]`); `login="someone[bot]"` another
app's installation token; `user_token=True` a personal access token whose
GET /user names `login`. As on GitHub, updating a comment written by someone
else is refused (403).

Real HTTP on a real socket, run in a thread by the test. Faults are queued:
`server.fail("GET", 500)`, `server.fail("GET", 429, headers={"Retry-After": "1"})`,
`server.delay("POST", 1.0)` (act, then answer late), `server.redirect("GET", url)`.
Every request is recorded with its headers.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

_LIST = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/(\d+)/comments$")
_USER = "/user"
_ONE = re.compile(r"^/repos/([^/]+)/([^/]+)/issues/comments/(\d+)$")
_REVIEWS = re.compile(r"^/(?:repos/([^/]+)/([^/]+)|repositories/(\d+))/pulls/(\d+)/reviews$")
REPOSITORY_ID = 1296269
_DOCS = "https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict
    body: str


@dataclass
class Fault:
    method: str
    status: int = 0
    headers: dict = field(default_factory=dict)
    body: str = ""
    delay: float = 0.0  # act normally, but answer this late
    location: str = ""


class FakeGitHub:
    def __init__(
        self, token: str, host: str = "127.0.0.1", page_size: int = 2,
        login: str = "github-actions[bot]", user_token: bool = False,
    ) -> None:
        self.token = token
        self.login = login
        self.user_token = user_token
        self.user_answer: tuple[int, dict] | None = None  # override GET /user's answer
        self.page_size = page_size
        self.comments: list[dict] = []
        self.pulls: dict[int, dict] = {}  # number -> {"author", "reviews": [...]}
        self.requests: list[Seen] = []
        self.faults: list[Fault] = []
        self._next_id = 1000
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8") if length else ""
                owner._serve(self, body)

            do_GET = do_POST = do_PATCH = _handle

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:  # a client that timed out and left
                pass

        self.server = Server((host, 0), Handler)
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # ------------------------------------------------------------------ test API

    def __enter__(self) -> "FakeGitHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, status: int, headers: dict | None = None, body: dict | None = None) -> None:
        self.faults.append(Fault(method, status, headers or {}, json.dumps(body or {"message": f"fault {status}"})))

    def delay(self, method: str, seconds: float) -> None:
        self.faults.append(Fault(method, delay=seconds))

    def redirect(self, method: str, location: str, status: int = 307) -> None:
        self.faults.append(Fault(method, status, location=location))

    def add_comment(self, body: str, login: str = "someone") -> dict:
        with self._lock:
            self._next_id += 1
            comment = {"id": self._next_id, "body": body, "user": {"login": login}, "html_url": f"{self.url}/c/{self._next_id}"}
            self.comments.append(comment)
            return comment

    def add_pull(self, number: int, author: str = "octocat", head_sha: str = "6dcb09b5b57875f334f61aebed695e2e4193db5e") -> dict:
        with self._lock:
            self.pulls[number] = {"author": author, "head_sha": head_sha, "reviews": []}
            return self.pulls[number]

    def add_review(self, number: int, login: str, state: str, *, body: str = "", commit_id: str | None = None,
                   association: str = "MEMBER") -> dict:
        """A submitted review, as GET .../pulls/{number}/reviews lists it (DISMISSED: an approval later dismissed).

        `commit_id`: the pull request's head when the review was submitted (default: its head now).
        `association`: the reviewer's `author_association` with the repository, one of GitHub's
        OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR, FIRST_TIMER, MANNEQUIN, NONE.
        """
        with self._lock:
            pull = self.pulls[number]
            self._next_id += 1
            review_id = self._next_id
            html = f"https://github.com/o/r/pull/{number}#pullrequestreview-{review_id}"
            api = f"{self.url}/repos/o/r/pulls/{number}"
            review = {
                "id": review_id,
                "node_id": f"PRR_kwDO{review_id:08d}",
                "user": {
                    "login": login, "id": 1000 + len(login), "node_id": f"U_kgDO{len(login):06d}",
                    "avatar_url": f"https://avatars.githubusercontent.com/u/{1000 + len(login)}?v=4",
                    "url": f"{self.url}/users/{login}", "html_url": f"https://github.com/{login}",
                    "type": "User", "site_admin": False,
                },
                "body": body,
                "state": state,
                "html_url": html,
                "pull_request_url": api,
                "author_association": association,
                "_links": {"html": {"href": html}, "pull_request": {"href": api}},
                "submitted_at": f"2026-11-30T12:{len(pull['reviews']) // 60 % 60:02d}:{len(pull['reviews']) % 60:02d}Z",
                "commit_id": commit_id or pull["head_sha"],
            }
            pull["reviews"].append(review)
            return review

    def calls(self) -> list[str]:
        return [f"{r.method} {urlsplit(r.path).path}" for r in self.requests]

    # ------------------------------------------------------------------ serving

    def _take_fault(self, method: str) -> Fault | None:
        with self._lock:
            for i, fault in enumerate(self.faults):
                if fault.method == method:
                    return self.faults.pop(i)
        return None

    def _serve(self, handler: BaseHTTPRequestHandler, body: str) -> None:
        method = handler.command
        with self._lock:
            self.requests.append(Seen(method, handler.path, dict(handler.headers.items()), body))
        fault = self._take_fault(method)
        if fault and fault.location:
            return self._send(handler, fault.status, "", {"Location": fault.location})
        if fault and fault.status:
            return self._send(handler, fault.status, fault.body, fault.headers)
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return self._send(handler, 401, json.dumps({"message": "Bad credentials"}))
        status, payload, headers = self._route(method, handler.path, body)
        if fault and fault.delay:
            time.sleep(fault.delay)
        self._send(handler, status, json.dumps(payload), headers)

    def _route(self, method: str, raw_path: str, body: str):
        parts = urlsplit(raw_path)
        if parts.path == _USER and method == "GET":
            if self.user_answer is not None:
                return self.user_answer[0], self.user_answer[1], {}
            if not self.user_token:
                return 403, {"message": "Resource not accessible by integration",
                             "documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
                             "status": "403"}, {}
            return 200, {"login": self.login, "id": 4242, "type": "User"}, {}
        listing = _LIST.match(parts.path)
        if listing and method == "GET":
            page = int(parse_qs(parts.query).get("page", ["1"])[0])
            start = (page - 1) * self.page_size
            with self._lock:
                items = self.comments[start:start + self.page_size]
                more = len(self.comments) > start + self.page_size
            headers = {}
            if more:
                headers["Link"] = f'<{self.url}{parts.path}?per_page=100&page={page + 1}>; rel="next"'
            return 200, items, headers
        if listing and method == "POST":
            return 201, self.add_comment(json.loads(body)["body"], login=self.login), {}
        reviews = _REVIEWS.match(parts.path)
        if reviews and method == "GET":
            return self._reviews(reviews, parts)
        one = _ONE.match(parts.path)
        if one and method == "PATCH":
            with self._lock:
                for comment in self.comments:
                    if comment["id"] == int(one.group(3)):
                        if comment["user"]["login"].casefold() != self.login.casefold():
                            return 403, {"message": "Resource not accessible by integration"}, {}
                        comment["body"] = json.loads(body)["body"]
                        return 200, comment, {}
            return 404, {"message": "Not Found"}, {}
        return 404, {"message": "Not Found"}, {}

    def _reviews(self, match, parts):
        if match.group(3) is not None and int(match.group(3)) != REPOSITORY_ID:
            return 404, {"message": "Not Found", "documentation_url": _DOCS, "status": "404"}, {}
        query = parse_qs(parts.query)
        try:
            per_page = max(1, min(100, int(query.get("per_page", ["30"])[0])))
            page = max(1, int(query.get("page", ["1"])[0]))
        except ValueError:
            return 422, {"message": "Validation Failed", "documentation_url": _DOCS, "status": "422"}, {}
        with self._lock:
            pull = self.pulls.get(int(match.group(4)))
            if pull is None:
                return 404, {"message": "Not Found", "documentation_url": _DOCS, "status": "404"}, {}
            items = [dict(r) for r in pull["reviews"]]
        last = max(1, -(-len(items) // per_page))
        start = (page - 1) * per_page
        headers = {}
        base = f"{self.url}/repositories/{REPOSITORY_ID}/pulls/{match.group(4)}/reviews?per_page={per_page}"
        links = []
        if page > 1:
            links += [f'<{base}&page={page - 1}>; rel="prev"', f'<{base}&page=1>; rel="first"']
        if page < last:
            links += [f'<{base}&page={page + 1}>; rel="next"', f'<{base}&page={last}>; rel="last"']
        if links:
            headers["Link"] = ", ".join(links)
        return 200, items[start:start + per_page], headers

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, text: str, headers: dict | None = None) -> None:
        data = text.encode("utf-8")
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)
