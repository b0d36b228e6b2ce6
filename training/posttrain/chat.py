"""The chat template: system/user/assistant/tool turns marked by special tokens.

    <|system|>You answer briefly.<|end|><|user|>2+2?<|end|><|assistant|>4<|end|>

Each turn is ``<|role|> content <|end|>``; nothing else sits between turns, so rendering and
parsing are exact inverses (``parse(render(m)) == m``). The role markers are added to a trained
BPE tokenizer as special tokens (never split, never produced by ordinary text) and the model's
embedding grows through ``training.vocab_extension`` (each new row starts as the mean of the
rows of the pieces the old tokenizer splits the marker into).

Assistant turns that call tools carry the inference package's turn JSON (``{"calls": [...]}`` or
``{"answer": ...}``); a tool turn holds the results one JSON object per line, the lines
``inference.prompting.with_tool_results`` writes, so a post-trained model and the constrained
decoder agree on the format.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from corpus.errors import CidermillError

ROLES = ("system", "user", "assistant", "tool")
ROLE_TOKENS = {r: f"<|{r}|>" for r in ROLES}
END = "<|end|>"
CHAT_TOKENS = [*ROLE_TOKENS.values(), END]
TRUNCATED = " …[truncated]"
_SPLIT = re.compile("(" + "|".join(re.escape(t) for t in CHAT_TOKENS) + ")")


class ChatFormatError(CidermillError):
    """A conversation the template cannot carry; ``reason`` is the drop reason recorded for it."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def tool_result_text(results: list[dict]) -> str:
    """A tool turn's content: one compact JSON object per call result (as inference/prompting.py)."""
    return "\n".join(json.dumps(r, separators=(",", ":"), default=str) for r in results)


def check_conversation(messages: list[dict]) -> None:
    """Raise ``ChatFormatError`` (with its drop reason) for what the template cannot carry."""
    called = False
    for m in messages:
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise ChatFormatError("unknown_role", f"unknown role {role!r} (known: {', '.join(ROLES)})")
        if not isinstance(content, str):
            raise ChatFormatError("bad_content", f"{role} turn content must be text, got {type(content).__name__}")
        if _SPLIT.search(content):
            raise ChatFormatError("special_token_in_content", f"{role} turn contains a chat marker")
        if role == "assistant":
            called = content.lstrip().startswith('{"calls"')
        elif role == "tool":
            if not called:
                raise ChatFormatError("tool_result_without_call", "a tool result follows no assistant tool call")
            called = False
    if not any(m["role"] == "assistant" for m in messages):
        raise ChatFormatError("no_assistant_turn", "conversation has no assistant turn")


def render(messages: list[dict], add_generation_prompt: bool = False) -> str:
    text = "".join(f"{ROLE_TOKENS[m['role']]}{m['content']}{END}" for m in messages)
    return text + (ROLE_TOKENS["assistant"] if add_generation_prompt else "")


def parse(text: str) -> list[dict]:
    """Inverse of ``render``: the turns of a rendered conversation (a trailing unfinished turn too)."""
    parts = [p for p in _SPLIT.split(text) if p != ""]
    role_of = {v: k for k, v in ROLE_TOKENS.items()}
    out, i = [], 0
    while i < len(parts):
        if parts[i] not in role_of:
            raise ChatFormatError("bad_template", f"expected a role marker, got {parts[i][:30]!r}")
        role, content, i = role_of[parts[i]], "", i + 1
        if i < len(parts) and parts[i] not in CHAT_TOKENS:
            content, i = parts[i], i + 1
        out.append({"role": role, "content": content})
        if i < len(parts) and parts[i] == END:
            i += 1
    return out


# ---- tokenizer and model -------------------------------------------------------------------------
def add_chat_tokens(tokenizer):
    """A copy of ``tokenizer`` with the chat markers as special tokens; returns (tokenizer, new tokens).
    Markers already present are kept at their ids."""
    from tokenizers import AddedToken, Tokenizer
    tok = Tokenizer.from_str(tokenizer.to_str())
    new = [t for t in CHAT_TOKENS if tok.token_to_id(t) is None]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in new])
    return tok, new


def prepare_chat_model(model, base_tokenizer, chat_tokenizer, new_tokens: list[str]) -> None:
    """Give the model an embedding row for every new marker, started as the mean of its pieces'
    rows (``vocab_extension``). Ids past the model's vocabulary grow it; ids inside it (a model
    whose vocabulary was rounded up past the tokenizer's) get their rows re-initialised the same way."""
    import torch

    from training.vocab_extension import grow_model_vocab, new_token_rows
    ids = [chat_tokenizer.token_to_id(t) for t in new_tokens]
    V = model.config.vocab_size
    inside = [(i, t) for i, t in zip(ids, new_tokens) if i < V]
    if inside:
        rows = new_token_rows(model.tok_embeddings.weight.detach(), base_tokenizer, [t for _, t in inside])
        with torch.no_grad():
            model.tok_embeddings.weight[[i for i, _ in inside]] = rows
    outside = [t for i, t in zip(ids, new_tokens) if i >= V]
    if outside:
        grow_model_vocab(model, base_tokenizer, outside, new_vocab_size=max(ids) + 1)


@dataclass
class Encoded:
    ids: list[int]
    loss_mask: list[bool]            # True on assistant content and its <|end|>: what SFT learns
    notes: list[str] = field(default_factory=list)   # e.g. "tool_result_truncated"


def encode(tokenizer, messages: list[dict], max_len: int) -> Encoded:
    """Token ids and the assistant-only loss mask of a conversation of at most ``max_len`` tokens.

    A tool result that would not fit beside the rest is cut to what fits and marked ``…[truncated]``; a
    prompt (everything before the first assistant turn) that does not fit, or a conversation that
    does not fit whole, is refused with a reason."""
    check_conversation(messages)
    ids: list[int] = []
    mask: list[bool] = []
    notes: list[str] = []
    end_id = tokenizer.token_to_id(END)
    role_ids = {r: tokenizer.token_to_id(t) for r, t in ROLE_TOKENS.items()}
    if end_id is None or None in role_ids.values():
        raise CidermillError("tokenizer has no chat markers: add them with add_chat_tokens first")
    first_assistant = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    bodies = [tokenizer.encode(m["content"], add_special_tokens=False).ids for m in messages]
    marker = tokenizer.encode(TRUNCATED, add_special_tokens=False).ids
    for k, m in enumerate(messages):
        body = bodies[k]
        if m["role"] == "tool":
            room = max_len - sum(len(b) + 2 for j, b in enumerate(bodies) if j != k) - 2
            if len(body) > room:  # cut to what fits beside the rest of the conversation
                body = bodies[k] = body[:max(room - len(marker), 0)] + marker
                notes.append("tool_result_truncated")
        learn = m["role"] == "assistant"
        ids += [role_ids[m["role"]], *body, end_id]
        mask += [False] + [learn] * (len(body) + 1)
        if k == first_assistant - 1 and len(ids) + 2 > max_len:
            raise ChatFormatError("prompt_too_long", f"prompt of {len(ids)} tokens leaves no room in a "
                                                     f"context of {max_len}")
    if len(ids) > max_len:
        raise ChatFormatError("conversation_too_long", f"conversation of {len(ids)} tokens exceeds {max_len}")
    return Encoded(ids, mask, notes)


def prompt_ids(tokenizer, messages: list[dict]) -> list[int]:
    """Ids of ``messages`` followed by ``<|assistant|>``: what generation continues from."""
    out = []
    for m in messages:
        out += [tokenizer.token_to_id(ROLE_TOKENS[m["role"]]),
                *tokenizer.encode(m["content"], add_special_tokens=False).ids, tokenizer.token_to_id(END)]
    return out + [tokenizer.token_to_id(ROLE_TOKENS["assistant"])]
