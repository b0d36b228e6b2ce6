"""The address policy of every outgoing request: non-http(s) schemes and non-global addresses refused.

One module, used by every fetch the project makes (pages, robots.txt, sitemaps, images, the
subresources a rendered page asks for), at two points:

- before a request, `AddressPolicy.check(url)` resolves the host and refuses it when any address
  it resolves to is not globally routable (cached per host for the crawl);
- at connect time, `refused_peer(ip)` is asked about the address the socket actually reached
  (crawl/fetch.py wraps every connection with it), so a name that resolved to a public address
  when it was checked and answers 127.0.0.1 a moment later (DNS rebinding) gets nothing.

"Globally routable" is Python's `ipaddress.is_global`, plus what it misses on some versions:
multicast, 6to4 (2002::/16) and Teredo tunnels, NAT64 prefixes that embed a non-global IPv4,
and IPv4-mapped IPv6 addresses are judged by the IPv4 address inside. `allow_private` (the
demo and the tests crawl 127.0.0.1) turns the address checks off, never the scheme check.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from urllib.parse import urlsplit

from crawl.urls import ALLOWED_SCHEMES

# refused outright: tunnels whose far end cannot be checked, and ranges `is_global` accepts on older Pythons
_REFUSED_V6 = tuple(ipaddress.ip_network(n) for n in (
    "2002::/16",        # 6to4
    "2001::/32",        # Teredo
    "64:ff9b:1::/48",   # NAT64, local use (RFC 8215)
    "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8", "100::/64", "2001:db8::/32", "2001:10::/28"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_REFUSED_V4 = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "224.0.0.0/3"))


def is_refused_ip(ip: str) -> bool:
    """True when `ip` is not a globally routable unicast address (or cannot be parsed)."""
    try:
        addr = ipaddress.ip_address(ip.split("%")[0])
    except ValueError:
        return True
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        elif addr in _NAT64:
            addr = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        elif any(addr in n for n in _REFUSED_V6):
            return True
    if isinstance(addr, ipaddress.IPv4Address) and any(addr in n for n in _REFUSED_V4):
        return True
    return not addr.is_global or addr.is_multicast



def resolve(host: str) -> set[str]:
    """Every address `host` resolves to (empty when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError):
        return set()
    return {i[4][0] for i in infos}


class AddressPolicy:
    """`check(url) -> None | reason` ('bad_scheme', 'invalid_url', 'private_address', 'dns_error')."""

    def __init__(self, allow_private: bool = False):
        self.allow_private = allow_private
        self._cache: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def refused_peer(self, ip: str) -> bool:
        """The connect-time check: may a socket that reached `ip` be used?"""
        return not self.allow_private and is_refused_ip(ip)

    def _resolve_reason(self, host: str) -> str | None:
        ips = resolve(host)
        if not ips:
            return "dns_error"
        if not self.allow_private and any(is_refused_ip(ip) for ip in ips):
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
