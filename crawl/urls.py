"""URL canonicalisation: one spelling per page, so the seen set and page ids never hold duplicates.

Lower-cases scheme and host, drops default ports, fragments, dot segments, empty queries and
tracking parameters (utm_*, gclid, fbclid, session ids), sorts the remaining query parameters and
normalises percent-encoding. Anything that is not an absolute http(s) URL is rejected with a
reason instead of raising, so a bad link on a page is a logged skip, never a crash.
"""
from __future__ import annotations

import hashlib
import posixpath
import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urljoin, urlsplit, urlunsplit

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
TRACKING_PARAMS = re.compile(
    r"^(utm_[a-z_]+|gclid|fbclid|dclid|msclkid|mc_cid|mc_eid|yclid|_hsenc|_hsmi|igshid|ref_src|"
    r"sessionid|session_id|sid|phpsessid|jsessionid|aspsessionid[a-z]*|cfid|cftoken)$", re.I)
_SAFE_PATH = "/:@!$&'()*+,;=-._~%"
_SAFE_QUERY = "/:@!$'()*+,;-._~%?"
MAX_URL_LEN = 2048


class BadURL(ValueError):
    """A URL that cannot be crawled; `reason` is the crawl log's skip reason."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def _norm_path(path: str) -> str:
    if not path:
        return "/"
    # jsessionid in the path (";jsessionid=...") is a session token, not part of the page.
    path = re.sub(r";jsessionid=[^/?#]*", "", path, flags=re.I)
    trailing = path.endswith("/")
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if trailing and not norm.endswith("/"):
        norm += "/"
    return quote(unquote(norm), safe=_SAFE_PATH)


def canonicalize(url: str, base: str | None = None) -> str:
    """Absolute canonical http(s) URL, or raise BadURL(reason)."""
    if not isinstance(url, str):
        raise BadURL("invalid_url", repr(url))
    url = url.strip().replace("\\", "/")
    if not url:
        raise BadURL("invalid_url", "empty")
    if len(url) > MAX_URL_LEN:
        raise BadURL("invalid_url", "too long")
    if re.search(r"[\x00-\x1f\x7f\s]", url):
        url = re.sub(r"[\x00-\x1f\x7f]", "", url)
        url = re.sub(r"\s", "%20", url)
    try:
        if base:
            url = urljoin(base, url)
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise BadURL("invalid_url", str(e)) from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise BadURL("bad_scheme", scheme or "(none)")
    host = (parts.hostname or "").strip(".").lower()
    if not host:
        raise BadURL("invalid_url", "no host")
    try:
        host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise BadURL("invalid_url", "bad host") from None
    if not re.fullmatch(r"[a-z0-9.\-_\[\]:]+", host):
        raise BadURL("invalid_url", f"bad host {host!r}")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    query_items = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                   if not TRACKING_PARAMS.match(k)]
    query = urlencode(sorted(query_items), doseq=True, safe=_SAFE_QUERY) if query_items else ""
    return urlunsplit((scheme, netloc, _norm_path(parts.path), query, ""))


def try_canonicalize(url: str, base: str | None = None) -> tuple[str | None, str | None]:
    """(canonical, None) or (None, skip reason)."""
    try:
        return canonicalize(url, base), None
    except BadURL as e:
        return None, e.reason


_SITE_LINKS: dict[tuple[str, str, str], tuple[str | None, str | None]] = {}
SITE_LINKS_MAX = 1 << 15   # entries kept across pages before the memo starts afresh


class LinkResolver:
    """try_canonicalize(href, base) for the links of one page, memoised.

    A link that does not depend on the page's path (absolute `http(s)://`, protocol-relative
    `//host`, or root-relative `/path`) resolves the same way on every page of a site: urljoin
    reads only the base's scheme and host for it. Those are kept across pages, keyed by the page's
    scheme and host, so the navigation every page of a site repeats is canonicalised once per
    process; any other link is kept for this page only. The results are exactly try_canonicalize's."""

    def __init__(self, base: str | None):
        self.base = base
        self.local: dict[str, tuple[str | None, str | None]] = {}
        try:
            parts = urlsplit(base) if base else None
        except ValueError:
            parts = None
        self.site = (parts.scheme, parts.netloc) if parts is not None else None

    def __call__(self, href: str) -> tuple[str | None, str | None]:
        hit = self.local.get(href)
        if hit is not None:
            return hit
        key = None
        if self.site is not None and (href[:1] == "/" or href[:8].lower().startswith(("http://", "https://"))):
            key = (*self.site, href)
            hit = _SITE_LINKS.get(key)
        if hit is None:
            hit = try_canonicalize(href, self.base)
            if key is not None:
                if len(_SITE_LINKS) >= SITE_LINKS_MAX:
                    _SITE_LINKS.clear()
                _SITE_LINKS[key] = hit
        self.local[href] = hit
        return hit


def authority_of(url: str) -> str:
    """host[:port] of a canonical URL (its authority, default port dropped): the unit of
    politeness, crawl slots and the `host` column of pages and crawl logs."""
    return urlsplit(url).netloc




def hostname_of(url: str) -> str:
    """The bare host name, lowercased, without port or trailing dot ("" if the URL has none or
    does not parse): what a domain rule such as a blocklist or a per-domain cap matches."""
    try:
        return (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def origin_of(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


def url_id(canonical_url: str) -> str:
    """Row id of a page: sha1 of its canonical URL."""
    return hashlib.sha1(canonical_url.encode("utf-8")).hexdigest()
