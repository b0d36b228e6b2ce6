"""The crawler's one identity. Every fetcher, robots.txt check, robots meta/X-Robots-Tag reader and
WARC importer takes its defaults from here, so the token a site's robots.txt names, the opt-out
token and the User-Agent header a server logs can never drift apart.

- `BOT_TOKEN`: the robots.txt product token (`User-agent: CiderBot`), also the name matched in
  `<meta name="ciderbot">` and `X-Robots-Tag: CiderBot: ...`.
- `OPTOUT_TOKEN`: the training opt-out token (like Applebot-Extended): pages it may not fetch are
  still crawled for links but marked training_allowed=false.
- `agent_string(token)`: the User-Agent header, `token/version (cidermill; +info-url)`.
"""
from __future__ import annotations

BOT_TOKEN = "CiderBot"
OPTOUT_TOKEN = "CiderBot-Extended"
BOT_VERSION = "0.1"
BOT_INFO_URL = "https://example.invalid/ciderbot"


def agent_string(token: str = BOT_TOKEN) -> str:
    """The User-Agent header for a crawler that answers to robots.txt token `token`."""
    return f"{token}/{BOT_VERSION} (cidermill; +{BOT_INFO_URL})"


AGENT_STRING = agent_string()
