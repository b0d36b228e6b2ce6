"""User-facing errors: one clear line, no traceback (the CLI prints them and exits non-zero)."""


class CidermillError(Exception):
    """A mistake in input, options or data that the user can fix; printed as one line."""


class ShardError(CidermillError):
    """A dataset on disk is missing, truncated, altered or does not match its manifest."""


class ConfigError(CidermillError):
    """A config file or option is unreadable or names an unknown key or an impossible value."""
