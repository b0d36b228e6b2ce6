"""`cidermill generate`: text, a typed value (--schema) or a tool-using answer (--tools) from a checkpoint."""
from __future__ import annotations

import argparse
import importlib
import json
import sys

HELP = "generate from a checkpoint: text, a typed JSON value (--schema), tool calls (--tools), speculative (--draft)"
DESCRIPTION = HELP + """

examples:
  cidermill generate --checkpoint out/demo/train --prompt "The cider"
  cidermill generate --checkpoint out/demo/train --prompt "A person:" --schema mytypes:Person
  cidermill generate --checkpoint run/ --prompt "Weather in Oslo?" --tools mytools --schema mytypes:Answer
  cidermill generate --checkpoint big/ --draft small/ --prompt "..." --temperature 0.8 --seed 1
  cidermill generate --checkpoint run/ --adapter recovery/ --prompt "..."
  cidermill generate --checkpoint out/qat2/model.packed --adapter out/qat2/lora --prompt "..."
  cidermill generate --checkpoint out/sft --prompt "..." --guard

--schema names a dataclass, enum or pydantic model as module:Type (the module is imported from the
current directory or PYTHONPATH); the output is decoded under its grammar and printed as JSON.
--tools names a module: its public functions with type annotations (or the list TOOLS in it) become
the tools; their calls run concurrently under --tool-timeout and errors go back to the model.
--guard runs the safety filter on the prompt and on the output; a failing one prints a typed
refusal {"refusal": {"stage": "input"|"output", "reason": ..., "scores": ...}} instead and exits 3."""
BEAM = False


def configure(p):
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--checkpoint", required=True, help="checkpoint step directory, training run directory, or a packed file (cidermill compress)")
    p.add_argument("--prompt", required=True, help="prompt text ('-' reads standard input)")
    p.add_argument("--tokenizer", help="tokenizer directory or tokenizer.json (default: found next to the checkpoint)")
    p.add_argument("--schema", help="module:Type for a typed answer")
    p.add_argument("--tools", help="module whose annotated functions are the tools")
    p.add_argument("--draft", help="draft checkpoint for speculative decoding (same tokenizer)")
    p.add_argument("--draft-tokenizer", help="the draft's tokenizer (default: found next to the draft)")
    p.add_argument("--k", type=int, default=4, help="tokens the draft proposes per step (default 4)")
    p.add_argument("--adapter", action="append", default=[], help="LoRA adapter directory (peft format); "
                   "the last one given is used for this request")
    p.add_argument("--max-new-tokens", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kv-int8", action="store_true", help="8-bit KV cache")
    p.add_argument("--tool-timeout", type=float, default=10.0, help="seconds per tool call (default 10)")
    p.add_argument("--no-format-in-prompt", action="store_true", help="do not add the schema to the prompt")
    p.add_argument("--stats", action="store_true", help="print tokens/s and acceptance to stderr")
    p.add_argument("--guard", action="store_true", help="safety-check prompt and output; refuse (exit 3) on either")


def _import(spec: str, what: str):
    from corpus.errors import ConfigError
    mod_name, _, attr = spec.partition(":")
    if what == "schema" and not attr:
        raise ConfigError(f"--schema must be module:Type, got {spec!r}")
    if "." not in sys.path and "" not in sys.path:
        sys.path.insert(0, "")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise ConfigError(f"--{what} {spec}: cannot import module {mod_name!r} ({e})") from None
    if not attr:
        return mod
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ConfigError(f"--schema {spec}: module {mod_name!r} has no {attr!r}") from None


def _tools_of(mod):
    import inspect
    if hasattr(mod, "TOOLS"):
        return list(mod.TOOLS)
    return [f for name, f in inspect.getmembers(mod, inspect.isfunction)
            if not name.startswith("_") and f.__module__ == mod.__name__]


def run(args, beam_args) -> int:
    from corpus.errors import ConfigError
    from inference.generator import Generator
    from inference.tools import run_with_tools

    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if args.guard:
        return _guarded(args, prompt)
    if args.max_new_tokens < 1:
        raise ConfigError("--max-new-tokens must be >= 1")
    type_ = _import(args.schema, "schema") if args.schema else None
    tools = _tools_of(_import(args.tools, "tools")) if args.tools else None
    if args.tools and not tools:
        raise ConfigError(f"--tools {args.tools}: the module defines no public functions")
    gen = Generator.from_checkpoint(args.checkpoint, tokenizer=args.tokenizer, draft=args.draft,
                                    draft_tokenizer=args.draft_tokenizer, kv_int8=args.kv_int8,
                                    speculative_k=args.k)
    adapter = None
    for path in args.adapter:
        adapter = gen.load_adapter(path)
    kw = dict(max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=args.top_p,
              seed=args.seed, adapter=adapter)
    if tools:
        run_ = run_with_tools(gen, prompt, tools, type_ or str, timeout=args.tool_timeout, **kw)
        for i, turn in enumerate(run_.turns, 1):
            for c in turn:
                print(f"tool turn {i}: {c.name}({json.dumps(c.arguments)}) -> "
                      f"{'error: ' + c.error if c.error else json.dumps(c.result, default=str)}", file=sys.stderr)
        print(_dump(run_.answer))
        if args.stats:
            _print_stats(run_.stats)
        return 0
    if type_ is not None:
        out = gen.respond_output(prompt, type_, inject_format=not args.no_format_in_prompt, **kw)
        print(_dump(out.value))
    else:
        out = gen.generate(prompt, **kw)
        print(out.text)
    if args.stats:
        _print_stats([out.stats])
    return 0


def _print_stats(stats) -> None:
    """--stats: tokens/s and draft acceptance over every model turn (one, or one per tool turn)."""
    tokens, secs = sum(s.tokens for s in stats), sum(s.seconds for s in stats)
    drafted, accepted = sum(s.drafted for s in stats), sum(s.accepted for s in stats)
    turns = f" over {len(stats)} model turns" if len(stats) > 1 else ""
    print(f"{tokens} tokens in {secs:.2f}s ({tokens / max(secs, 1e-9):.1f} tokens/s){turns}"
          + (f", draft acceptance {accepted / drafted:.0%}" if drafted else ""), file=sys.stderr)


def _guarded(args, prompt: str) -> int:
    """--guard: the whole request under the input and output safety checks."""
    from inference.guard import Guard
    guard = Guard()
    refusal = guard.check(prompt, "input")
    if refusal is None:
        import io
        from contextlib import redirect_stdout
        buf = io.StringIO()
        args.guard = False
        with redirect_stdout(buf):
            rc = run(args, None)
        text = buf.getvalue()
        refusal = guard.check(text, "output")
        if refusal is None:
            sys.stdout.write(text)
            return rc
    print(json.dumps(refusal.to_json()))
    return 3


def _dump(value) -> str:
    from pydantic import TypeAdapter
    return TypeAdapter(type(value)).dump_json(value).decode()
