"""cidermill crawl package."""
