"""What planlint knows about each store a split path can name: one class per scheme, one registry.

A `Scheme` holds what differs from one store to the next (its extra, its
client and time bounds, versions in a path, object names and identities,
its errors, how PL107 pins a path); `SCHEMES` is the registry and
`scheme_of(value)` finds a path's. Adding a store: docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from planlint.core.messages import show
from planlint.core.urls import scheme as uri_scheme
from planlint.services.split_data._addresses import AddressRefused, non_public_host, plain_http_allowed
from planlint.services.split_data.resolve import has_magic

def listed_size(info: dict) -> Optional[int]:
    """An object's size as its filesystem's listing gives it, or None."""
    size = info.get("size", info.get("Size"))
    return int(size) if isinstance(size, int) else None


@dataclass(frozen=True)
class Floating:
    """A split path that can change under the same name (PL107).

    `why` completes "splits.NAME.path 'PATH' ...", `pinned` is the path
    pinned (placeholders in angle brackets), and `moves` says whether the
    path certainly follows new data (it reads whatever was pushed last)
    rather than only being open to an overwrite."""

    why: str
    pinned: str
    moves: bool


class Scheme:
    """A store split paths can name. Subclasses set the class attributes and override what differs."""

    #: The schemes a plan may write for this store; the first is how messages name it.
    names: tuple[str, ...] = ()
    #: The optional extra that brings the client (pip install 'planlint[EXTRA]') ...
    extra: str = ""
    #: ... and the modules the client needs, each with the package that brings it.
    modules: tuple[tuple[str, str], ...] = ()
    #: Whether a path with wildcards is listed as a glob (a URL is one object, whatever it holds).
    globs: bool = True
    #: Listing fields that name an object's version, then ones that name its content (with its
    #: size), most specific first: the first one present is the object's identity for the cache.
    version_fields: tuple[str, ...] = ()
    content_fields: tuple[str, ...] = ()

    # -- the plan's path

    def refusal(self, value: str) -> Optional[str]:
        """Why `value` is never read, decided before any request; None: it may be."""
        return None

    def locate(self, value: str) -> tuple[str, Optional[str]]:
        """(the path for the store's filesystem, the version the split path names or None)."""
        return value.split("://", 1)[1], None

    def floating(self, value: str) -> Optional[Floating]:
        """How `value` can change under the same name (PL107), or None when it is pinned."""
        return None

    # -- the client

    def missing_extra(self) -> Optional[tuple[str, str]]:
        """(extra, package) when the client is not installed, else None."""
        for module, package in self.modules:
            if not _installed(module):
                return self.extra, package
        return None

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        """The fsspec filesystem (fsspec imported here: an optional extra), each request waiting at
        most `wait` seconds (None: the client's own timeouts), retrying nothing."""
        raise NotImplementedError

    def preload(self) -> None:
        """Import the client's modules now (a process about to fork workers shares them)."""
        import fsspec

        fsspec.get_filesystem_class(self.names[0])

    def connect(self, fs: Any) -> Optional[Callable[[], Any]]:
        """What a worker process calls to have a fresh client ready before its first object, if anything."""
        return None

    def info_options(self, version: Optional[str]) -> dict:
        """Options of the filesystem's `info` for one object of this version."""
        return {}

    def open_options(self, info: dict, version: Optional[str]) -> dict:
        """Options of the filesystem's `open` for an object listed with `info`."""
        return {}

    # -- objects

    def object_name(self, path: str, prefix: str, version: Optional[str]) -> str:
        """What messages call an object at `path`: the part after a glob's fixed `prefix`, or its last component."""
        return path[len(prefix):] if prefix and path.startswith(prefix) else path.rsplit("/", 1)[-1]

    def object_uri(self, value: str, path: str, version: Optional[str]) -> str:
        """The URI of the object at `path` of the split path `value` (shown once secrets are masked)."""
        return f"{self.names[0]}://{path}"

    def identities(self, info: dict, version: Optional[str]) -> list[str]:
        """Every name of an object's content its `info` holds, most specific first (the first is
        its identity): a HEAD answer may hold a version a bucket listing lacks."""
        found = [] if version is None else [f"version:{version}"]
        for key in self.version_fields:
            value = info.get(key)
            if value and value != "null":
                found.append(f"{key}:{value}")
        found.extend(self._content_hashes(info))
        for key in self.content_fields:
            value = info.get(key)
            if value:
                found.append(f"etag:{value}:{listed_size(info)}")
        return found

    def identity(self, info: dict, version: Optional[str]) -> Optional[str]:
        """What names an object's content for the cache, or None (such an object is not cached)."""
        found = self.identities(info, version)
        return found[0] if found else None

    def _content_hashes(self, info: dict) -> list[str]:
        return []

    def content_key(self, identity: list) -> list:
        """An object's [uri, identity, size] as a key of its cached index part: what must not change
        for the part to still be the object's."""
        return list(identity)

    # -- what the client's errors mean

    def refused(self, error: BaseException) -> Optional[BaseException]:
        """The refusal of planlint's own (an address, a redirect) behind a client's error, if any."""
        return None

    def missing_reason(self, error: FileNotFoundError) -> str:
        """Why the object of a FileNotFoundError is missing, as said after the split path."""
        return "does not exist"

    def denied_text(self, error: BaseException) -> Optional[str]:
        """What the client's `error` says when it is an access denial its type alone does not show."""
        return None

    def http_status(self, error: BaseException) -> Optional[int]:
        """The HTTP status behind the client's `error`, when it says one."""
        status = getattr(getattr(error, "response", None), "status_code", None)
        return status if isinstance(status, int) else None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _request_timeouts(wait: Optional[float]) -> dict:
    """aiohttp's timeouts of each request (its default is 5 minutes), for `wait` seconds."""
    if wait is None:
        return {}
    import aiohttp

    return {"timeout": aiohttp.ClientTimeout(total=wait, sock_connect=wait, sock_read=wait)}


_GLOB_FLOATS = ("is a glob, and the objects it matches can be added, removed or overwritten under the same names",
                "the shards at a commit of a Hub dataset, hf://datasets/ORG/NAME@<commit sha>/train-*.parquet, or one versioned object per split")


# --------------------------------------------------------------------------
# the stores


class S3(Scheme):
    """Amazon S3 and its imitations (s3fs): `?versionId=ID` at the end names an object's version."""

    names = ("s3",)
    extra = "s3"
    modules = (("fsspec", "fsspec"), ("s3fs", "s3fs"))
    version_fields = ("VersionId",)
    content_fields = ("ETag",)

    VERSION_QUERY = re.compile(r"\?versionId=([^&#]+)$")

    def locate(self, value: str) -> tuple[str, Optional[str]]:
        path = value.split("://", 1)[1]
        match = self.VERSION_QUERY.search(path)
        return (path[: -len(match.group(0))], match.group(1)) if match else (path, None)

    def floating(self, value: str) -> Optional[Floating]:
        rest = value.partition("://")[2]
        version = self.VERSION_QUERY.search(rest)
        key = rest[: version.start()] if version else re.sub(r"\?versionId=$", "", rest)
        if has_magic(key):
            return Floating(*_GLOB_FLOATS, moves=False)
        if version and version.group(1) != "null":
            return None
        why = "names the null version, which a later upload to the key overwrites" if version else \
            "names an object key without a version, and the object can be overwritten under that key"
        return Floating(why, f"s3://{key}?versionId=<version id>", moves=False)

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        import fsspec

        # One attempt per request: botocore's retries (max_attempts counts the first) and
        # s3fs's own around each call (S3FileSystem.retries, 5, with no constructor argument)
        # would each wait read_timeout again, five times the budget on a stalled response.
        config: dict = {"retries": {"max_attempts": 1, "mode": "standard"}}
        if wait is not None:
            config.update(connect_timeout=wait, read_timeout=wait)
        fs = fsspec.filesystem("s3", skip_instance_cache=True, version_aware=version is not None, config_kwargs=config)
        fs.retries = 1
        return fs

    def connect(self, fs: Any) -> Optional[Callable[[], Any]]:
        return fs.connect  # the client itself (service model, endpoints) is made lazily

    def info_options(self, version: Optional[str]) -> dict:
        return {} if version is None else {"version_id": version}

    def open_options(self, info: dict, version: Optional[str]) -> dict:
        return {} if version is None else {"version_id": version}

    def object_uri(self, value: str, path: str, version: Optional[str]) -> str:
        return f"s3://{path}" + (f"?versionId={version}" if version else "")


class GoogleCloudStorage(Scheme):
    """Google Cloud Storage (gcsfs): `#GENERATION` at the end names an object's generation."""

    names = ("gs", "gcs")
    extra = "gcs"
    modules = (("fsspec", "fsspec"), ("gcsfs", "gcsfs"))
    version_fields = ("generation",)
    content_fields = ("etag", "md5Hash")

    GENERATION = re.compile(r"#(\d+)$")
    #: gcsfs's (and google-cloud-storage's) switch to a GCS emulator's address.
    EMULATOR_VARIABLE = "STORAGE_EMULATOR_HOST"

    def locate(self, value: str) -> tuple[str, Optional[str]]:
        # The generation stays in the path ('#N', version_aware): gcsfs reads that
        # generation only when the path names it (its files' range reads pass the path alone).
        path = value.split("://", 1)[1]
        match = self.GENERATION.search(path)
        return path, (match.group(1) if match else None)

    def floating(self, value: str) -> Optional[Floating]:
        rest = value.partition("://")[2]
        version = self.GENERATION.search(rest)
        if has_magic(rest[: version.start()] if version else rest):
            return Floating(*_GLOB_FLOATS, moves=False)
        if version:
            return None
        return Floating("names an object without a generation, and the object can be overwritten under that name",
                        f"{value.split('#', 1)[0]}#<generation>", moves=False)

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        import fsspec

        options: dict = {"skip_instance_cache": True, "version_aware": version is not None, "access": "read_only"}
        if wait is not None:
            # requests_timeout is each request's; timeout only a few calls'
            options.update(timeout=wait, requests_timeout=_request_timeouts(wait)["timeout"])
        if os.environ.get(self.EMULATOR_VARIABLE, "") in ("", "default"):
            fs = fsspec.filesystem("gcs", **options)
        else:
            # An emulator takes no credentials (google-cloud-storage's own client is anonymous
            # there too): the Application Default Credentials chain would ask the GCE metadata
            # service over the network, and send a real token to the emulator's host. And it
            # speaks the JSON API only: gcsfs's default filesystem (its zonal and hierarchical
            # bucket support) first asks for the bucket's layout over gRPC, which an emulator
            # never answers, and waits a minute per bucket. Its JSON API filesystem is used.
            from gcsfs.core import GCSFileSystem

            fs = GCSFileSystem(token="anon", **options)
        _retry_once(fs)
        return fs

    def object_name(self, path: str, prefix: str, version: Optional[str]) -> str:
        name = super().object_name(path, prefix, version)
        return name[: -len(version) - 1] if version is not None else name  # without its '#generation'

    def http_status(self, error: BaseException) -> Optional[int]:
        # gcsfs raises a plain OSError('Forbidden: URL ...') for a 403
        if isinstance(error, OSError) and not error.strerror and str(error).startswith("Forbidden: "):
            return 403
        return super().http_status(error)


def _retry_once(fs: Any) -> None:
    """gcsfs retries each request 6 times (sleeping 1, 2, 4, 8, 16 s between), a number fixed
    by the decorator on its methods when the class is made: `fs` gets them with one attempt."""
    import types

    from gcsfs.retry import retry_request

    for name in ("_request", "_get_file_request"):
        method = getattr(type(fs), name, None)
        plain = getattr(method, "__wrapped__", None)
        if plain is not None:
            setattr(fs, name, types.MethodType(retry_request(retries=1)(plain), fs))


class HuggingFaceHub(Scheme):
    """Hugging Face Hub datasets (huggingface_hub's HfFileSystem): `@REVISION` after the repository."""

    names = ("hf",)
    extra = "hf"
    modules = (("fsspec", "fsspec"), ("huggingface_hub", "huggingface_hub"))
    version_fields = ("blob_id",)

    _COMMIT = re.compile(r"^[0-9a-f]{40}$")
    _LATE_REVISION = re.compile(r"^hf://[^/]+/[^/]+/[^/@]+(?P<file>/[^@]+)@(?P<revision>[^/@]+)$")
    _PATH = re.compile(r"^hf://(?P<kind>datasets|spaces|models)/(?P<org>[^/@]+)/(?P<name>[^/@]+)(?:@(?P<revision>[^/]*))?(?P<file>/.*)?$")
    _REVISION = re.compile(r"^(hf://[^/]+/[^/]+/[^/@]+)@[^/]+")

    #: What huggingface_hub's FileNotFoundError was caused by -> what is missing (HfFileSystem
    #: raises FileNotFoundError for a missing file, revision or repository alike).
    _MISSING = (
        ("RevisionNotFoundError", "does not exist (the dataset has no such revision)"),
        ("GatedRepoError", "cannot be read (the dataset is gated and the token in HF_TOKEN has not been granted access)"),
        ("RepositoryNotFoundError", "does not exist (no such dataset, or it is private and no token in HF_TOKEN opens it)"),
    )

    def floating(self, value: str) -> Optional[Floating]:
        match = self._PATH.match(value)
        if match and match.group("revision") and self._COMMIT.match(match.group("revision")):
            return None
        late = self._LATE_REVISION.match(value) if match and not match.group("revision") else None
        if match and late:
            # huggingface_hub reads a revision only after the repository's name: FILE@REV names a file "FILE@REV"
            revision = late.group("revision") if self._COMMIT.match(late.group("revision")) else "<commit sha>"
            pinned = f"hf://{match.group('kind')}/{match.group('org')}/{match.group('name')}@{revision}{late.group('file')}"
            why = f"puts the revision {show(late.group('revision'))} after the file, where huggingface_hub reads it as part of the file's name"
        elif match:
            pinned = f"hf://{match.group('kind')}/{match.group('org')}/{match.group('name')}@<commit sha>{match.group('file') or ''}"
            why = "has no revision, so it reads whatever was pushed last" if not match.group("revision") else \
                f"names the revision {show(match.group('revision'))}, a branch or tag that can move, not a commit hash"
        else:
            pinned, why = "hf://datasets/ORG/NAME@<commit sha>/FILE", "is not of the form hf://datasets/ORG/NAME@REVISION/FILE with a commit hash"
        return Floating(why, pinned, moves=True)

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        import fsspec

        return fsspec.filesystem("hf", skip_instance_cache=True)

    def _content_hashes(self, info: dict) -> list[str]:
        lfs = info.get("lfs")
        return [f"sha256:{lfs['sha256']}"] if isinstance(lfs, dict) and lfs.get("sha256") else []

    def content_key(self, identity: list) -> list:
        # Without the revision: the id (the Hub's blob id or LFS SHA-256) names the content, and a
        # new commit of the dataset must not make its unchanged files miss.
        uri = identity[0]
        return [self._REVISION.sub(r"\1", uri) if isinstance(uri, str) else uri, *identity[1:]]

    def missing_reason(self, error: FileNotFoundError) -> str:
        causes = {kind.__name__ for kind in type(error.__cause__).__mro__} if error.__cause__ is not None else set()
        for name, text in self._MISSING:  # the most specific first
            if name in causes:
                return text
        return super().missing_reason(error)

    def denied_text(self, error: BaseException) -> Optional[str]:
        if any(kind.__name__ == "GatedRepoError" for kind in type(error).__mro__):  # a 403
            return "access denied: the dataset is gated and the token in HF_TOKEN has not been granted access"
        return None


class RedirectRefused(Exception):
    """An http(s) server answered with a redirect, which is never followed (see `_refuse_redirects`)."""


async def _refuse_redirects(response: Any) -> None:
    """aiohttp's response check for http(s) split objects: a redirect is an error, not a hop.

    The public-address check looks at the host the plan names; a public
    server could redirect the runner to its instance metadata or the
    private network, so redirects are not followed (`allow_redirects=False`)
    and a 3xx answer is refused here rather than read as the object's bytes.
    """
    if 300 <= response.status < 400:
        raise RedirectRefused(f"the server redirects (HTTP {response.status}), and redirects are not followed:"
                              " name the object's own address")
    response.raise_for_status()


class Https(Scheme):
    """Plain URLs (fsspec's HTTPFileSystem over aiohttp), read from public addresses only."""

    names = ("https", "http")
    extra = "https"
    modules = (("fsspec", "fsspec"), ("aiohttp", "aiohttp"))
    globs = False
    content_fields = ("ETag",)

    def refusal(self, value: str) -> Optional[str]:
        if uri_scheme(value) == "http" and not plain_http_allowed(value):
            return "plain http:// is not read (the data could be changed on the way): use https://"
        return non_public_host(value)  # early and clear; the client checks again when it connects (_resolver)

    def locate(self, value: str) -> tuple[str, Optional[str]]:
        return value, None

    def floating(self, value: str) -> Optional[Floating]:
        return Floating("is a URL, and what it serves can be replaced under the same name",
                        "a versioned location such as s3://BUCKET/KEY?versionId=<version id> or hf://datasets/ORG/NAME@<commit sha>/FILE",
                        moves=False)

    def client(self, version: Optional[str], wait: Optional[float]) -> Any:
        import fsspec

        # the session connects to public addresses only, checked when it resolves the name
        # (DNS rebinding), and without proxies from the environment: see _resolver (imported
        # here: it needs aiohttp, an optional extra)
        from planlint.services.split_data._resolver import public_client

        client = {"raise_for_status": _refuse_redirects, **_request_timeouts(wait)}
        return fsspec.filesystem("https", skip_instance_cache=True, client_kwargs=client, get_client=public_client,
                                 allow_redirects=False)

    def preload(self) -> None:
        super().preload()
        from planlint.services.split_data import _resolver  # noqa: F401  (aiohttp's resolver, for the client)

    def open_options(self, info: dict, version: Optional[str]) -> dict:
        size = listed_size(info)
        # known from the listing: fsspec would ask the server again at open
        return {"size": size} if size is not None and info.get("partial", True) else {}

    def object_name(self, path: str, prefix: str, version: Optional[str]) -> str:
        return urlsplit(path).path.rsplit("/", 1)[-1]

    def object_uri(self, value: str, path: str, version: Optional[str]) -> str:
        return path

    def refused(self, error: BaseException) -> Optional[BaseException]:
        # fsspec reports a refusal as a FileNotFoundError caused by it, aiohttp as a connection error caused by it
        seen = 0
        cause: Optional[BaseException] = error
        while cause is not None and seen < 8:
            if isinstance(cause, (RedirectRefused, AddressRefused)):
                return cause
            cause, seen = cause.__cause__ or cause.__context__, seen + 1
        return None


#: The stores split paths may name, in the order messages list them.
SCHEMES: tuple[Scheme, ...] = (S3(), GoogleCloudStorage(), HuggingFaceHub(), Https())


def scheme_of(value: str) -> Optional[Scheme]:
    """The store a split path names, `LOCAL_FILES` for a path without a scheme, None for a scheme no store reads."""
    name = uri_scheme(value)
    if name is None:
        return LOCAL_FILES
    return next((known for known in SCHEMES if name in known.names), None)


def floating(value: str) -> Optional[Floating]:
    """How the split path `value` can change under the same name (PL107), or None."""
    found = scheme_of(value)
    return None if found is None else found.floating(value)


def schemes_read() -> str:
    """The schemes planlint reads, for a message: "s3://, gs://, hf://, https://"."""
    return ", ".join(f"{known.names[0]}://" for known in SCHEMES)


# --------------------------------------------------------------------------
# local files


#: A local file at least this large is hashed (for the cache key) in two
#: halves at once: a thread for the first, this thread for the second
#: (hashlib and file reads release the GIL, so both cores work).
HASH_SPLIT_BYTES = 32 << 20


def _sha256_of(path: Any, start: int, end: Optional[int]) -> bytes:
    """SHA-256 of the bytes from `start` up to `end` (None: the end of the file)."""
    digest = hashlib.sha256()
    block = bytearray(1 << 20)
    view = memoryview(block)
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        left = None if end is None else end - start
        while left is None or left > 0:
            count = handle.readinto(view if left is None or left >= len(block) else view[:left])
            if not count:
                break
            digest.update(view[:count])
            if left is not None:
                left -= count
    return digest.digest()


def content_sha256(path: Any) -> str:
    """The content identity of a local file for the cache key: the hex SHA-256
    of its bytes; for a file of HASH_SPLIT_BYTES or more, "halves:" and the hex
    SHA-256 of the SHA-256s of its two halves, computed at the same time.
    Raises OSError. Any thread it starts has ended when it returns (the data
    checks fork workers only in a process without threads)."""
    size = os.path.getsize(path)
    if size < HASH_SPLIT_BYTES:
        return _sha256_of(path, 0, None).hex()
    half = size // 2
    first: list = []

    def hash_first() -> None:
        try:
            first.append(_sha256_of(path, 0, half))
        except BaseException as error:  # re-raised in the caller's thread
            first.append(error)

    thread = threading.Thread(target=hash_first, name="planlint-hash", daemon=True)
    thread.start()
    try:
        second = _sha256_of(path, half, None)
    finally:
        thread.join()
    if isinstance(first[0], BaseException):
        raise first[0]
    return "halves:" + hashlib.sha256(first[0] + second).hexdigest()


class LocalFiles(Scheme):
    """Files in the checkout: no client, pinned by the commit that holds them, named by their SHA-256."""

    def identity_of(self, path: Any) -> str:
        """What names a local file's content (raises OSError)."""
        return "sha256:" + content_sha256(path)

    def content_key(self, identity: list) -> list:
        # its SHA-256 alone, not its absolute path: a checkout in another directory, as CI
        # runners make, finds the same parts
        return [None, identity[1], None]


LOCAL_FILES = LocalFiles()
