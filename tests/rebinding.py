"""Parts of the DNS rebinding attack test (tests/test_remote_data.py).

`python tests/rebinding.py HOST FIRST THEN LOG -- planlint arguments` runs
planlint's command line in a process whose system resolver
(`socket.getaddrinfo`, which planlint's address check and the HTTP client's
resolver both call) answers the made-up name HOST with the address FIRST the
first time it is asked and with THEN every later time: what a hostile DNS
server with a zero TTL does. Every answer given is appended to the file LOG
(one address a line), so the test can see that the HTTP client asked too.
Other names resolve as usual. Nothing else of the process is changed.

`tls_files` writes a certificate authority and a server certificate for
given names (the test's HTTPS server on 127.0.0.1 presents it; the planlint
process trusts the authority through SSL_CERT_FILE, as any OpenSSL client
does), so the attack is made against `https://`, the only scheme planlint
reads outside tests.
"""

from __future__ import annotations

import datetime
import runpy
import socket
import sys
import threading
from pathlib import Path


def install(host: str, first: str, then: str, log: Path) -> None:
    """Make socket.getaddrinfo answer `host` with `first` once, then with `then`."""
    real = socket.getaddrinfo
    lock = threading.Lock()
    asked = []

    def getaddrinfo(name, port, family=0, type=0, proto=0, flags=0):
        if name != host:
            return real(name, port, family, type, proto, flags)
        with lock:
            address = first if not asked else then
            asked.append(address)
            with open(log, "a", encoding="utf-8") as out:
                out.write(address + "\n")
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port or 0)))]

    socket.getaddrinfo = getaddrinfo


def tls_files(directory: Path, names: list[str]) -> tuple[Path, Path, Path]:
    """(authority certificate, server certificate, server key) as PEM files; the server's names are `names`."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=2))

    def certificate(subject: str, key, issuer: str, issuer_key, *, authority: bool):
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(valid[0]).not_valid_after(valid[1])
                   .add_extension(x509.BasicConstraints(ca=authority, path_length=None), critical=True))
        if authority:
            builder = builder.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                          content_commitment=False, key_encipherment=False,
                                                          data_encipherment=False, key_agreement=False,
                                                          encipher_only=False, decipher_only=False), critical=True)
            builder = builder.add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        else:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False)
            builder = builder.add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    authority_key = ec.generate_private_key(ec.SECP256R1())
    authority = certificate("planlint test authority", authority_key, "planlint test authority", authority_key, authority=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate(names[0], server_key, "planlint test authority", authority_key, authority=False)
    paths = directory / "authority.pem", directory / "server.pem", directory / "server.key"
    paths[0].write_bytes(authority.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(server.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    return paths


if __name__ == "__main__":
    host, first, then, log, separator, *arguments = sys.argv[1:]
    assert separator == "--", "usage: rebinding.py HOST FIRST THEN LOG -- planlint arguments"
    install(host, first, then, Path(log))
    sys.argv = ["planlint", *arguments]
    runpy.run_module("planlint", run_name="__main__", alter_sys=True)
