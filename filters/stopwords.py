"""A few very common function words per language, for Gopher's "has stop words" rule.

Whole-word match on `filters.words.split_words` output; for Chinese and Japanese the words are
single characters (particles), which the splitter yields one by one. Korean particles attach to
words, so its list holds words that stand alone (conjunctions, bound nouns, "있는"/"하는" forms).
Vietnamese is written with a space between syllables, so its list holds function syllables.
Every one of the report's 15 languages has a list (`REPORT_LANGUAGES`).
"""
REPORT_LANGUAGES = ("en", "fr", "de", "it", "pt", "es", "ja", "ko", "zh", "da", "nl", "no", "sv", "tr", "vi")
STOP_WORDS: dict[str, frozenset[str]] = {k: frozenset(v.split()) for k, v in {
    "en": "the be to of and that have with",
    "de": "der die das und ist nicht mit zu den von",
    "fr": "le la les de et est un une des que pour",
    "es": "el la los de y que en un una es por",
    "it": "il la di e che è un una per non",
    "pt": "o a os de e que em um uma para não",
    "nl": "de het een en van is dat niet op te",
    "sv": "och att det som en på är av för",
    "da": "og at det som en på er af for",
    "no": "og at det som en på er av for",
    "tr": "ve bir bu da de için ile",
    "ko": "그리고 그러나 또는 및 등 수 것 있는 하는 있다 한다 이 그 더 또 때 위해 대한 같은",
    "vi": "và của là có được trong cho không những các một người này với để đã từ khi",
    "ar": "في من على أن إلى عن هذا",
    "zh": "的 是 了 在 和 有 不 这 我",
    "ja": "の に は を た が で て と",
}.items()}
