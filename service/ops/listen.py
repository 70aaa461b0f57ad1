"""Listening sockets for the HTTP and metrics ports, on --host as gRPC's port takes it."""

from __future__ import annotations

import errno
import socket

EVERY_INTERFACE = "::"
"""--host's default ("[::]"): every interface, IPv6 and IPv4."""


def bare_host(host: str) -> str:
    """--host without the brackets of an IPv6 literal ("[::1]" is "::1")."""
    return host.removeprefix("[").removesuffix("]")


def listening_socket(host: str, port: int, backlog: int = 128) -> socket.socket:
    """A listening socket on host:port (port 0: any free one). Raises OSError.

    Every interface ("::") is taken as gRPC takes it: one IPv6 socket that IPv4 clients reach
    too, whatever the host's net.ipv6.bindv6only says (an IPv4 scrape or probe of an IPv6-only
    socket is refused), or IPv4's 0.0.0.0 on a kernel without IPv6 (booted with
    ipv6.disable=1, as hardening guides advise), where the IPv6 socket cannot be made."""
    bare = bare_host(host)
    if bare == EVERY_INTERFACE:
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        except OSError as exc:
            if exc.errno != errno.EAFNOSUPPORT:
                raise
            return _listen(socket.socket(socket.AF_INET, socket.SOCK_STREAM), "0.0.0.0", port,
                           backlog)  # fmt: skip
        try:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        except OSError:
            sock.close()
            raise
        return _listen(sock, bare, port, backlog)
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    return _listen(socket.socket(family, socket.SOCK_STREAM), bare, port, backlog)


def _listen(sock: socket.socket, host: str, port: int, backlog: int) -> socket.socket:
    try:
        # A restart binds the port again at once, its last connections still in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
