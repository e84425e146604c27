"""A Google Cloud Storage imitation on 127.0.0.1 for the `gs://` split tests.

It speaks the JSON API paths gcsfs calls (read from gcsfs/core.py), so the
real client runs unchanged against it, pointed here by `STORAGE_EMULATOR_HOST`
as at any GCS emulator:

* `GET /storage/v1/b/{bucket}`: the bucket;
* `GET /storage/v1/b/{bucket}/o?prefix=&delimiter=&maxResults=&pageToken=&versions=`:
  a listing, paged, with `prefixes` for the delimiter's pseudo-directories and
  every generation when `versions=true`;
* `GET /storage/v1/b/{bucket}/o/{object}[?generation=]`: an object's metadata;
* `GET /download/storage/v1/b/{bucket}/o/{object}?alt=media[&generation=]`
  (and `alt=media` on the metadata path): its bytes, honouring `Range`.

Objects keep every generation written (a versioned bucket); errors are the
API's JSON `{"error": {"code", "message", "errors"}}`. `deny` holds object
names answered 403, as a bucket whose IAM lets the caller list but not read.
Every request is recorded (method, path, query, Range, status, body bytes);
requests whose path holds a part in `stall` wait until `release` is set;
and the server also stands in for the GCE metadata service (give its address
in `GCE_METADATA_HOST`/`GCE_METADATA_IP`): a credential lookup that asks it is
recorded in `metadata_requests` and refused, so a test can show none was made.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, quote, unquote, urlsplit

from object_store import LocalServer

FIRST_GENERATION = 1733171735123456


@dataclass
class Request:
    method: str
    path: str  # unquoted
    query: dict
    range: str | None
    authorization: str | None
    status: int = 0
    sent: int = 0  # body bytes sent back

    @property
    def media(self) -> bool:
        return self.query.get("alt") == ["media"]


@dataclass
class Version:
    generation: int
    data: bytes
    current: bool = True


@dataclass
class Bucket:
    objects: dict = field(default_factory=dict)  # name -> [Version, ...], oldest first


class GcsServer(LocalServer):
    """The GCS JSON API's reads; `url` is what `STORAGE_EMULATOR_HOST` names."""

    def __init__(self) -> None:
        self.buckets: dict[str, Bucket] = {}
        self.deny: set[str] = set()  # "bucket/object" answered 403
        self.stall: set[str] = set()  # parts of request paths answered only once `release` is set
        self.release = threading.Event()
        self.requests: list[Request] = []
        self.metadata_requests: list[str] = []
        self._lock = threading.Lock()
        self._generation = FIRST_GENERATION
        gcs = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                gcs._handle(self, body=True)

            def do_HEAD(self) -> None:
                gcs._handle(self, body=False)

        self._listen(Handler)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}"

    def put(self, bucket: str, name: str, data: bytes) -> int:
        """Write a new generation of `name`; returns its generation number."""
        with self._lock:
            versions = self.buckets.setdefault(bucket, Bucket()).objects.setdefault(name, [])
            for version in versions:
                version.current = False
            self._generation += 1000
            versions.append(Version(self._generation, data))
            return self._generation

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.metadata_requests.clear()

    def media_gets(self) -> list[Request]:
        """Downloads of object bytes (alt=media), not metadata or listings."""
        return [r for r in self.requests if r.method == "GET" and r.media and r.status in (200, 206)]

    # ------------------------------------------------------------------ answers

    def _handle(self, handler: BaseHTTPRequestHandler, body: bool) -> None:
        parts = urlsplit(handler.path)
        if parts.path.startswith("/computeMetadata/") or handler.headers.get("Metadata-Flavor"):
            with self._lock:
                self.metadata_requests.append(handler.path)
            self._send(handler, 404, {"Content-Type": "text/plain"}, b"not a metadata service", body)
            return
        query = parse_qs(parts.query, keep_blank_values=True)
        record = Request(handler.command, unquote(parts.path), query, handler.headers.get("Range"), handler.headers.get("Authorization"))
        with self._lock:
            self.requests.append(record)
        if any(part in record.path for part in self.stall):
            self.release.wait(600)  # a store that stalls: the client's timeout or the budget must end this
        try:
            status, headers, payload = self._route(parts.path, query, handler.headers)
        except Exception as error:  # a bug in the imitation is a 500, visible in the test
            status, headers, payload = 500, {"Content-Type": "text/plain"}, repr(error).encode()
        record.status = status
        self._send(handler, status, headers, payload, body)
        if body and handler.command == "GET" and status in (200, 206):
            record.sent = len(payload)

    @staticmethod
    def _send(handler, status: int, headers: dict, payload: bytes, body: bool) -> None:
        handler.send_response(status)
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        if body and handler.command != "HEAD":
            handler.wfile.write(payload)

    def _route(self, raw_path: str, query: dict, headers) -> tuple[int, dict, bytes]:
        match = re.fullmatch(r"/(download/)?storage/v1/b/([^/]+)(/o(?:/(.+))?)?", raw_path)
        if not match:
            return _error(404, "Not Found", "notFound")
        download, bucket_name, objects, name = match.groups()
        bucket = self.buckets.get(bucket_name)
        if bucket is None:
            return _error(404, "The specified bucket does not exist.", "notFound")
        if objects is None:
            return _json({"kind": "storage#bucket", "id": bucket_name, "name": bucket_name,
                          "versioning": {"enabled": True}, "storageClass": "STANDARD", "location": "US"})
        if name is None:
            return self._list(bucket_name, bucket, query)
        name = unquote(name)
        generation = (query.get("generation") or [None])[0]
        version = self._version(bucket, name, generation)
        if version is None:
            return _error(404, f"No such object: {bucket_name}/{name}", "notFound")
        if f"{bucket_name}/{name}" in self.deny:
            return _error(403, f"anonymous caller does not have storage.objects.get access to the Google Cloud "
                               f"Storage object. Permission 'storage.objects.get' denied on resource (or it may not exist).",
                          "forbidden")
        if query.get("alt") == ["media"] or download:
            return _media(version, headers.get("Range"))
        return _json(self._resource(bucket_name, name, version))

    def _version(self, bucket: Bucket, name: str, generation: str | None) -> Version | None:
        versions = bucket.objects.get(name) or []
        if generation is None:
            return next((version for version in versions if version.current), None)
        return next((version for version in versions if str(version.generation) == generation), None)

    def _resource(self, bucket_name: str, name: str, version: Version) -> dict:
        data = version.data
        resource = {
            "kind": "storage#object",
            "id": f"{bucket_name}/{name}/{version.generation}",
            "selfLink": f"{self.url}/storage/v1/b/{bucket_name}/o/{quote(name, safe='')}",
            "mediaLink": f"{self.url}/download/storage/v1/b/{bucket_name}/o/{quote(name, safe='')}?generation={version.generation}&alt=media",
            "name": name,
            "bucket": bucket_name,
            "generation": str(version.generation),
            "metageneration": "1",
            "contentType": "application/octet-stream",
            "storageClass": "STANDARD",
            "size": str(len(data)),
            "md5Hash": base64.b64encode(hashlib.md5(data).digest()).decode(),
            "etag": base64.b64encode(hashlib.sha1(data).digest()[:8]).decode(),
            "timeCreated": "2026-11-01T12:00:00.000Z",
            "updated": "2026-11-01T12:00:00.000Z",
        }
        if not version.current:
            resource["timeDeleted"] = "2026-11-02T12:00:00.000Z"
        return resource

    def _list(self, bucket_name: str, bucket: Bucket, query: dict) -> tuple[int, dict, bytes]:
        prefix = (query.get("prefix") or [""])[0]
        delimiter = (query.get("delimiter") or [""])[0]
        versions = (query.get("versions") or ["false"])[0] == "true"
        start = (query.get("startOffset") or [""])[0]
        end = (query.get("endOffset") or [""])[0]
        page_size = int((query.get("maxResults") or ["1000"])[0])
        offset = int((query.get("pageToken") or ["0"])[0])
        entries: list = []  # (name, resource or None for a prefix)
        seen_prefixes = set()
        for name in sorted(bucket.objects):
            if not name.startswith(prefix) or (start and name < start) or (end and name >= end):
                continue
            rest = name[len(prefix):]
            if delimiter and delimiter in rest:
                pseudo = prefix + rest.split(delimiter, 1)[0] + delimiter
                if pseudo not in seen_prefixes:
                    seen_prefixes.add(pseudo)
                    entries.append((pseudo, None))
                continue
            for version in bucket.objects[name]:
                if versions or version.current:
                    entries.append((name, self._resource(bucket_name, name, version)))
        page = entries[offset:offset + page_size]
        out: dict = {"kind": "storage#objects"}
        items = [resource for _, resource in page if resource is not None]
        prefixes = [name for name, resource in page if resource is None]
        if items:
            out["items"] = items
        if prefixes:
            out["prefixes"] = prefixes
        if offset + page_size < len(entries):
            out["nextPageToken"] = str(offset + page_size)
        return _json(out)


def _json(value) -> tuple[int, dict, bytes]:
    return 200, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(value).encode()


def _error(status: int, message: str, reason: str) -> tuple[int, dict, bytes]:
    body = {"error": {"code": status, "message": message, "errors": [{"message": message, "domain": "global", "reason": reason}]}}
    return status, {"Content-Type": "application/json; charset=UTF-8"}, json.dumps(body).encode()


def _media(version: Version, range_header: str | None) -> tuple[int, dict, bytes]:
    data = version.data
    headers = {
        "Content-Type": "application/octet-stream",
        "Accept-Ranges": "bytes",
        "ETag": f'"{hashlib.md5(data).hexdigest()}"',
        "x-goog-generation": str(version.generation),
        "x-goog-metageneration": "1",
        "x-goog-stored-content-length": str(len(data)),
        "x-goog-hash": "md5=" + base64.b64encode(hashlib.md5(data).digest()).decode(),
    }
    match = re.fullmatch(r"bytes=(\d+)-(\d*)", range_header or "")
    if not match:
        return 200, headers, data
    start = int(match.group(1))
    end = min(len(data), int(match.group(2)) + 1) if match.group(2) else len(data)
    if start >= len(data):
        return 416, {**headers, "Content-Range": f"bytes */{len(data)}"}, b""
    return 206, {**headers, "Content-Range": f"bytes {start}-{end - 1}/{len(data)}"}, data[start:end]
