"""Builders of training and benchmark data: tools a maintainer runs by hand to rebuild a shipped
model or a benchmark's corpus, never a pipeline stage.

- `debian_docs`: real documents from Debian documentation packages (`apt-get download` + `dpkg -x`).
- `boilerplate_gen`: generated web boilerplate, spam and word salad (negatives for a quality model).
- `quality_data`: rebuilds filters/models/quality.ftz from those two, through the library call
  `cidermill train-quality` makes (`python -m datatools.quality_data`).

It sits on filters/ (the models it trains are theirs) and corpus/; nothing but bench/ and tests
import it.
"""
