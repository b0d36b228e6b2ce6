"""Refuse URLs the crawler must never touch: non-http(s) schemes and private network addresses.

A host is refused when any address it resolves to is private, loopback, link-local, multicast,
reserved or unspecified (SSRF protection), unless the crawl runs with allow_private (the demo
and the tests crawl 127.0.0.1). Resolution results are cached per host for the crawl.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from urllib.parse import urlsplit

from crawl.urls import ALLOWED_SCHEMES


def is_private_ip(ip: str) -> bool:
    addr = ipaddress.ip_address(ip.split("%")[0])
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped:
        addr = addr.ipv4_mapped
    return (addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_multicast
            or addr.is_reserved or addr.is_unspecified)


class AddressPolicy:
    """`check(url) -> None | reason` ('bad_scheme', 'private_address', 'dns_error')."""

    def __init__(self, allow_private: bool = False):
        self.allow_private = allow_private
        self._cache: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def _resolve_reason(self, host: str) -> str | None:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except (socket.gaierror, UnicodeError, OSError):
            return "dns_error"
        ips = {i[4][0] for i in infos}
        if not ips:
            return "dns_error"
        if not self.allow_private and any(is_private_ip(ip) for ip in ips):
            return "private_address"
        return None

    def check(self, url: str) -> str | None:
        try:
            parts = urlsplit(url)
            host = parts.hostname
        except ValueError:
            return "invalid_url"
        if parts.scheme.lower() not in ALLOWED_SCHEMES:
            return "bad_scheme"
        if not host:
            return "invalid_url"
        with self._lock:
            if host in self._cache:
                return self._cache[host]
        reason = self._resolve_reason(host)
        with self._lock:
            self._cache[host] = reason
        return reason
