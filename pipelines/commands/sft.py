"""`cidermill sft data|train|rm`: build SFT conversations from the project's own sources, fine-tune,
and train a reward model on the trajectory trees' preference pairs."""
from __future__ import annotations

import argparse

HELP = "post-training data (QA, documents, guided format, tool trajectory trees) and supervised fine-tuning"
DESCRIPTION = HELP + """

examples:
  cidermill sft data --tokenizer out/tok --out out/sft-data --items 400
  cidermill sft data --tokenizer out/tok --out out/sft-docs --kinds docs --documents out/text
  cidermill sft data ... --kinds docs --documents out/text --mixed-language 0.2   # 20% asked in another language
  cidermill sft data --tokenizer out/tok --out out/sft-tools --kinds tools --preferences out/prefs
  cidermill sft train --init out/train --tokenizer out/tok --data out/sft-data --out out/sft --steps 200
  cidermill sft train ... --out out/sft           # run again: resumes exactly from the newest checkpoint
  cidermill sft rm --init out/sft --pairs out/prefs --out out/rm --steps 200

`data` writes a conversations dataset (held-out rows marked split=heldout, from source tables the
training rows never use) with a report of dropped rows by reason. `train` adds the chat markers
to the tokenizer and the model (new embedding rows = mean of their pieces), trains on assistant
tokens only, and skips (and records) any step whose loss is not finite. `rm` trains a reward
model (the SFT model plus a scalar head on the last token) with the Bradley-Terry loss on the
preference pairs, holds out whole trajectory trees, prints held-out pair accuracy (chance 0.5)
and saves it for `cidermill rl --reward-model`."""
BEAM = False
KINDS = ("qa", "guided", "tools", "docs")


def configure(p):
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = p.add_subparsers(dest="sft_cmd", metavar="data|train|rm", required=True)
    d = sub.add_parser("data", help="build a conversations dataset", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("--tokenizer", required=True, help="base tokenizer (the chat markers are added)")
    d.add_argument("--out", required=True, help="output dataset directory")
    d.add_argument("--kinds", default="qa,guided,tools", help=f"comma list of {','.join(KINDS)} (default qa,guided,tools)")
    d.add_argument("--items", type=int, default=200, help="source items per kind (default 200)")
    d.add_argument("--documents", help="documents dataset (text, language) for --kinds docs")
    d.add_argument("--max-docs", type=int, default=500)
    d.add_argument("--mixed-language", type=float, default=0.0, metavar="SHARE",
                   help="share of documents whose instruction is in another language, naming the answer's")
    d.add_argument("--error-rate", type=float, default=0.3, help="share of tool turns given an injected error")
    d.add_argument("--preferences", help="also write the trajectory trees' preference pairs here")
    d.add_argument("--max-len", type=int, default=1024, help="context the conversations must fit (tokens)")
    d.add_argument("--max-rows", type=int, default=5, help="body rows per source table (fewer: shorter prompts)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--overwrite", action="store_true")
    t = sub.add_parser("train", help="supervised fine-tuning on a conversations dataset", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--init", required=True, help="pretrained checkpoint or run directory")
    t.add_argument("--tokenizer", required=True, help="the base model's tokenizer")
    t.add_argument("--data", required=True, help="conversations dataset (`cidermill sft data`)")
    t.add_argument("--out", required=True, help="run directory (checkpoints, log, chat tokenizer)")
    t.add_argument("--steps", type=int, default=200)
    t.add_argument("--batch", type=int, default=8, help="conversations per step")
    t.add_argument("--seq-len", type=int, default=None, help="packed row length (default: the model's context)")
    t.add_argument("--max-seq-len", type=int, default=None,
                   help="raise the model's context for chat prompts (RoPE positions; default: the checkpoint's)")
    t.add_argument("--lr", type=float, default=3e-4)
    t.add_argument("--decay", choices=("constant", "cosine", "linear"), default="constant",
                   help="learning-rate decay (cosine/linear: 5%% warmup, then down to 10%% of --lr)")
    t.add_argument("--checkpoint-every", type=int, default=50)
    t.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("rm", help="reward model on preference pairs (Bradley-Terry)", description=DESCRIPTION,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--init", required=True, help="SFT run directory or checkpoint (the reward model's body)")
    r.add_argument("--pairs", required=True, help="preference pairs (`cidermill sft data --preferences DIR`)")
    r.add_argument("--out", required=True, help="reward model directory")
    r.add_argument("--tokenizer", help="chat tokenizer (default: the one saved in the SFT run)")
    r.add_argument("--steps", type=int, default=200)
    r.add_argument("--batch", type=int, default=8, help="pairs per step")
    r.add_argument("--lr", type=float, default=1e-4)
    r.add_argument("--heldout", type=float, default=0.2, help="share of trajectory trees held out (default 0.2)")
    r.add_argument("--seed", type=int, default=0)


def run(args, beam_args) -> int:
    import os

    from corpus.errors import ConfigError
    if args.sft_cmd == "data":
        return _data(args)
    if args.sft_cmd == "rm":
        return _reward_model(args)
    import torch
    from training.posttrain.data import encode_rows, read_rows
    from training.posttrain.setup import chat_model, save_chat_tokenizer
    from training.posttrain.sft import SFTConfig, run_sft
    torch.manual_seed(args.seed)
    model, tok = chat_model(args.init, args.tokenizer, args.max_seq_len)
    seq = args.seq_len or model.config.max_seq_len
    if seq > model.config.max_seq_len:
        raise ConfigError(f"--seq-len {seq} exceeds the model's context {model.config.max_seq_len}")
    rows = read_rows(args.data, split="train")
    convs, dropped = encode_rows(tok, rows, seq + 1)
    if not convs:
        raise ConfigError(f"{args.data}: no training conversation fits {seq} tokens (dropped: {dict(dropped)})")
    os.makedirs(args.out, exist_ok=True)
    save_chat_tokenizer(tok, args.out)
    cfg = SFTConfig(steps=args.steps, batch=args.batch, seq_len=seq, lr=args.lr, seed=args.seed,
                    checkpoint_every=args.checkpoint_every, decay=args.decay)
    print(f"sft: {len(convs)} conversations ({sum(dropped.values())} dropped: {dict(dropped)})")
    out = run_sft(model, convs, cfg, args.out, pad_id=tok.token_to_id("<|end|>"), log=print)
    print(f"sft: step {out['step']} in {args.out}; non-finite steps skipped: {out['nan_steps'] or 'none'}")
    return 0


def _data(args) -> int:
    import os

    from corpus.errors import ConfigError
    from pipelines.sft_data.write import write_conversations, write_preferences
    from training.posttrain.chat import add_chat_tokens
    from training.tokenizer import load_tokenizer
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise ConfigError(f"--kinds: unknown {', '.join(bad)} (known: {', '.join(KINDS)})")
    if args.items < 1:
        raise ConfigError("--items must be >= 1")
    if not 0.0 <= args.mixed_language <= 1.0:
        raise ConfigError("--mixed-language must be a share in [0, 1]")
    if args.max_rows < 2:
        raise ConfigError("--max-rows must be >= 2")
    if "docs" in kinds and not args.documents:
        raise ConfigError("--kinds docs needs --documents DATASET")
    tok, _ = add_chat_tokens(load_tokenizer(args.tokenizer))
    rows: list = []
    trees = []
    if "qa" in kinds:
        from pipelines.sft_data.instructions import qa_conversations
        rows += qa_conversations(args.seed, args.items, max_rows=args.max_rows)
    if "guided" in kinds:
        from pipelines.sft_data.guided import guided_conversations
        rows += guided_conversations(args.seed, args.items, max_rows=args.max_rows)
    if "tools" in kinds:
        from pipelines.sft_data.trajectories import tool_conversations
        tools = list(tool_conversations(args.seed, args.items, args.error_rate, max_rows=args.max_rows))
        rows += tools
        trees = tools
    if "docs" in kinds:
        from corpus.reader import open_dataset
        from pipelines.sft_data.instructions import document_conversations
        if not os.path.isdir(args.documents):
            raise ConfigError(f"{args.documents}: no such dataset directory")
        ds = open_dataset(args.documents)
        docs = []
        for r in ds.iter_rows(["id", "text", "language"] if "language" in ds.schema.names else ["id", "text"]):
            docs.append(r)
            if len(docs) >= args.max_docs:
                break
        rows += document_conversations(docs, mixed=args.mixed_language)
    stats = write_conversations(rows, args.out, tok, args.max_len, "sft_data",
                                {"kinds": kinds, "items": args.items, "seed": args.seed, "max_rows": args.max_rows}, overwrite=args.overwrite)
    st = stats.stages["sft_data"]
    print(f"sft data: {st.kept} conversations kept of {st.rows_in} in {args.out}; dropped {dict(st.dropped) or 'none'}")
    if args.preferences:
        import json

        from pipelines.sft_data.trajectories import preference_pairs
        pairs = [{"id": f"{r['id']}-{k}", **p} for r in trees for k, p in enumerate(preference_pairs(json.loads(r["tree"])))]
        n = write_preferences(pairs, args.preferences, overwrite=args.overwrite)
        print(f"preference pairs: {n} in {args.preferences}")
    return 0


def _reward_model(args) -> int:
    import dataclasses
    import os

    import torch

    from corpus.errors import ConfigError
    from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
    from training.posttrain import reward_model as R
    from training.posttrain.chat import END
    from training.tokenizer import load_tokenizer
    if args.steps < 1 or args.batch < 1:
        raise ConfigError("--steps and --batch must be >= 1")
    if not 0.0 < args.heldout < 1.0:
        raise ConfigError("--heldout must be between 0 and 1")
    torch.manual_seed(args.seed)
    tok = load_tokenizer(args.tokenizer or os.path.join(args.init, "tokenizer"))
    if tok.token_to_id(END) is None:
        raise ConfigError("the tokenizer has no chat markers: give the SFT run's tokenizer")
    rm = R.RewardModel(load_model_from_checkpoint(checkpoint_dir(args.init)))
    pairs, dropped = R.encode_pairs(tok, R.read_pairs(args.pairs), rm.config.max_seq_len)
    train, held = R.split_by_source(pairs, args.heldout, args.seed)
    if not train or not held:
        raise ConfigError(f"{args.pairs}: {len(pairs)} usable pairs give {len(train)} training and {len(held)} "
                          f"held-out ones; both must be non-empty (dropped: {dict(dropped)})")
    pad = tok.token_to_id(END)
    cfg = R.RMConfig(steps=args.steps, batch=args.batch, lr=args.lr, heldout=args.heldout, seed=args.seed)
    before = R.pair_accuracy(rm, held, pad)
    print(f"rm: {len(train)} training pairs, {len(held)} held-out (by trajectory tree); dropped {dict(dropped) or 'none'}")
    out = R.train_reward_model(rm, train, cfg, pad, log=print)
    after = R.pair_accuracy(rm, held, pad)
    R.save_reward_model(rm, args.out, {"config": dataclasses.asdict(cfg), "train_pairs": len(train),
                                       "heldout_pairs": len(held), "heldout_accuracy_before": before,
                                       "heldout_accuracy": after, "nan_steps": out["nan_steps"]})
    print(f"rm: held-out pair accuracy {before:.3f} -> {after:.3f} (chance 0.5); non-finite steps "
          f"{out['nan_steps'] or 'none'}; saved to {args.out}")
    return 0
