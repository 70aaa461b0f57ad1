"""Targets, channel options and metadata shared by the sync and asyncio clients."""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Mapping, Sequence
from typing import TypeAlias
from urllib.parse import urlsplit

import grpc

from ._errors import Unavailable

Metadata: TypeAlias = Mapping[str, str | bytes] | Sequence[tuple[str, str | bytes]]
"""Call metadata: a mapping or a sequence of (key, value) pairs; keys in lower case, bytes
values only for keys ending in "-bin"."""
Options: TypeAlias = Sequence[tuple[str, object]]
"""gRPC channel arguments, e.g. [("grpc.ssl_target_name_override", "tts.example.com")]."""
Target: TypeAlias = str | Sequence[str]

ROUND_ROBIN = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})


_SCHEMES = {"http": False, "grpc": False, "https": True, "grpcs": True}
"""URL schemes a target may be written with, and whether each means TLS."""
_SCHEME_PORTS = {"http": 80, "https": 443}


def url_target(target: Target) -> tuple[Target, bool | None]:
    """`target` with its URLs' schemes taken off, and whether they ask for TLS (None: no
    scheme given). A server's address is often copied as a URL ("http://tts:50051",
    "https://tts.example.com"); gRPC reads the scheme as part of a host name and can only say
    "Misformatted domain name". http:// and grpc:// mean plaintext, https:// and grpcs:// TLS;
    http:// and https:// without a port mean 80 and 443. A path is refused: gRPC has none."""
    parts = target.split(",") if isinstance(target, str) else list(target)
    found: dict[bool, str] = {}
    plain = []
    for part in (p.strip() for p in parts):
        url = urlsplit(part)
        scheme = url.scheme.lower()
        if scheme not in _SCHEMES or not url.netloc:  # host:port, dns:///, unix://...
            plain.append(part)
            continue
        if url.path.strip("/") or url.query:
            raise ValueError(
                f"{part!r} has a path ({url.path}): a gRPC server is reached at host:port "
                "alone (a server's gRPC port, not its HTTP API's URL)"
            )
        if url.port is None and scheme not in _SCHEME_PORTS:
            raise ValueError(f"{part!r} names no port: give {scheme}://host:port")
        found[_SCHEMES[scheme]] = part
        plain.append(url.netloc if url.port else f"{url.netloc}:{_SCHEME_PORTS[scheme]}")
    if len(found) > 1:
        raise ValueError(
            f"{found[False]!r} asks for plaintext and {found[True]!r} for TLS: one server, one way"
        )
    tls = next(iter(found), None)
    return (",".join(plain) if isinstance(target, str) else plain), tls


_SCHEMED = ("unix:", "unix-abstract:", "vsock:", "ipv4:", "ipv6:")
"""gRPC targets whose address is not host:port."""


def names_no_port(target: Target) -> bool:
    """Whether a target of one address leaves its port out ("tts", "dns:///tts", "::1"): gRPC
    then dials 443, HTTPS's port, where a voxlite server seldom listens."""
    address, _ = url_target(target)  # "http://tts" is "tts:80" here
    if not isinstance(address, str) or "," in address or address.startswith(_SCHEMED):
        return False
    if address.startswith("dns:"):
        address = address.rpartition("/")[2]
    if address.startswith("["):
        return "]:" not in address
    return address.count(":") != 1


def target_tls(target: Target, tls: bool, *, tls_given: bool) -> tuple[Target, bool]:
    """`target` without URL schemes, and `tls` as its scheme says: https:// turns TLS on; an
    http:// target with TLS asked for (`tls`, or `tls_given`: credentials or certificates) is
    refused, as one of the two is a mistake."""
    target, url_tls = url_target(target)
    if url_tls is False and (tls or tls_given):
        raise ValueError(
            "the target's http:// (or grpc://) says plaintext, but TLS options were given: "
            "write https://, or leave the scheme out"
        )
    return target, tls or (url_tls is True and not tls_given)


def resolve_target(target: Target) -> tuple[str, bool]:
    """The gRPC target string, and whether it should be balanced round robin. A target is:

    - "host:port" (or any gRPC target such as "unix:/path"): used as given, one connection;
    - "dns:///name:port": every address the name resolves to, balanced round robin (gRPC
      re-resolves the name as usual);
    - several "host:port" addresses, as a list or tuple or one comma-separated string: round
      robin over all of them. IP addresses become an `ipv4:`/`ipv6:` target; host names are
      resolved once, when the client is made (gRPC has no resolver for a list of names: for
      a name whose addresses change, give "dns:///name:port"). All must share one IP family:
      IPv4 when every entry has an IPv4 address, else IPv6."""
    parts = target.split(",") if isinstance(target, str) else list(target)
    parts = [p.strip() for p in parts if p.strip()]
    if not parts:
        raise ValueError("the target is empty: give host:port, dns:///name:port or a list")
    if len(parts) == 1:
        return parts[0], parts[0].startswith("dns:")
    families = ((socket.AF_INET, "ipv4"), (socket.AF_INET6, "ipv6"))
    resolved = [{f: _addresses(*_split(p), f) for f, _ in families} for p in parts]
    for part, by_family in zip(parts, resolved, strict=True):
        if not any(by_family.values()):
            raise Unavailable(f"cannot resolve the host of {part!r}")
    for family, scheme in families:
        if all(r[family] for r in resolved):
            unique = dict.fromkeys(a for r in resolved for a in r[family])
            return f"{scheme}:{','.join(unique)}", True
    raise Unavailable(
        f"cannot balance over {', '.join(parts)}: they do not all have IPv4 addresses, "
        "nor all IPv6 addresses"
    )


def _split(address: str) -> tuple[str, int]:
    """("host", port) from "host:port" or "[v6]:port"."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not host or "/" in address:
        raise ValueError(f"{address!r} in a list of targets must be host:port")
    return host.removeprefix("[").removesuffix("]"), int(port)


def _addresses(host: str, port: int, family: socket.AddressFamily) -> list[str]:
    """Every address of `host` in `family`, formatted for an ipv4:/ipv6: target."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
        except socket.gaierror:
            infos = []
        ips = [str(info[4][0]) for info in infos]
    else:
        ips = [str(ip)] if (ip.version == 4) == (family == socket.AF_INET) else []
    if family == socket.AF_INET6:
        return [f"[{ip}]:{port}" for ip in ips]
    return [f"{ip}:{port}" for ip in ips]


def channel_options(round_robin: bool, options: Options | None) -> list[tuple[str, object]]:
    """The caller's options, plus our defaults for those they leave unset: the round-robin
    service config, and no HTTP/2 window growth (BDP probing).

    Without BDP probing the receive window stays at 64 KiB, so a client that reads slower than
    real time makes the server pause that stream's synthesis after a few seconds of audio
    (backpressure) instead of letting megabytes pile up in this process. 64 KiB is still many
    times the bitrate of any encoding on a LAN.
    """
    merged = list(options or ())
    keys = {key for key, _ in merged}
    if round_robin and "grpc.service_config" not in keys:
        merged.append(("grpc.service_config", ROUND_ROBIN))
    if "grpc.http2.bdp_probe" not in keys:
        merged.append(("grpc.http2.bdp_probe", 0))
    return merged


def security(
    *,
    credentials: grpc.ChannelCredentials | None,
    tls: bool,
    root_certificates: bytes | None,
    certificate_chain: bytes | None,
    private_key: bytes | None,
    token: str | None,
) -> tuple[grpc.ChannelCredentials | None, tuple[tuple[str, str | bytes], ...]]:
    """The channel credentials for the TLS and token options, and metadata to add to calls.

    With TLS the token travels as call credentials (gRPC sends it only over secure channels).
    Over plaintext gRPC refuses call credentials, so the token goes as ordinary metadata,
    readable by anyone on the path: keep plaintext with a token to loopback or a private
    network."""
    tls_options = tls or any(
        x is not None for x in (root_certificates, certificate_chain, private_key)
    )
    if credentials is not None and tls_options:
        raise ValueError(
            "give either credentials= or the TLS options (tls, root_certificates, "
            "certificate_chain, private_key), not both"
        )
    if (certificate_chain is None) != (private_key is None):
        raise ValueError(
            "certificate_chain and private_key go together: the client certificate and its key"
        )
    if tls_options:
        credentials = grpc.ssl_channel_credentials(
            root_certificates, private_key, certificate_chain
        )
    if token is None:
        return credentials, ()
    if not token or not all("!" <= c <= "~" for c in token):
        raise ValueError("the token must be printable ASCII without spaces")
    if credentials is None:
        return None, (("authorization", f"Bearer {token}"),)
    call = grpc.access_token_call_credentials(token)  # sends "authorization: Bearer <token>"
    return grpc.composite_channel_credentials(credentials, call), ()


def merge_metadata(
    default: tuple[tuple[str, str | bytes], ...], call: Metadata | None
) -> tuple[tuple[str, str | bytes], ...] | None:
    """The client's default metadata followed by the call's own."""
    merged = default + as_pairs(call)
    return merged or None


def as_pairs(metadata: Metadata | None) -> tuple[tuple[str, str | bytes], ...]:
    if metadata is None:
        return ()
    items = metadata.items() if isinstance(metadata, Mapping) else metadata
    return tuple((str(k), v) for k, v in items)
