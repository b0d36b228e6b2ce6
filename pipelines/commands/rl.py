"""`cidermill rl`: GRPO-style RL with verifiable rewards from an SFT run."""
from __future__ import annotations

import argparse

HELP = "GRPO-style RL on verifiable tasks (exact QA, schema answers, tool tasks) with reward-variance prompt selection"
DESCRIPTION = HELP + """

examples:
  cidermill rl --sft out/sft --data out/sft-data --out out/rl --steps 50
  cidermill rl --sft out/sft --data out/sft-data --out out/rl-random --selection random
  cidermill rl --sft out/sft --data out/sft-data --out out/rl-tools --tool-tasks
  cidermill rl --sft out/sft --data out/sft-data --out out/rl-async --async --max-staleness 2
  cidermill rl ... --out out/rl-proc --async --actor-process   # actor in its own process
  cidermill rl ... --out out/rl                   # run again: resumes exactly (sync runs)
  cidermill rl ... --reward-model out/rm --reward-model-weight 0.5

Each step samples --group completions for each of --prompts prompts, scores them (a reward that
raises or exceeds --reward-timeout scores 0 and is logged), and takes one clipped policy-gradient
step with a KL penalty to the SFT model. --selection variance re-scores --candidates prompts every
--select-every steps and keeps the --keep whose rewards vary most. --async runs the actor in its
own thread; samples carry their policy version and are never older than --max-staleness updates
(the clipped importance ratio corrects for the rest). Prompts come from the dataset's train split.
--reward-model (from `cidermill sft rm`) adds W * sigmoid(score) of each completion, in [0, W], to
its verifiable reward. --tool-tasks adds the tool tasks: each completion is a whole playout on the
tool platform (up to --tool-max-turns call turns), rewarded 1 when its final answer is right; the
loss covers the assistant turns, never the tool results."""
BEAM = False


def configure(p):
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.add_argument("--sft", required=True, help="SFT run directory (or checkpoint); also the KL reference")
    p.add_argument("--data", required=True, help="conversations dataset (`cidermill sft data`)")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument("--tokenizer", help="chat tokenizer (default: the one saved in the SFT run)")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--prompts", type=int, default=4, help="prompts per step")
    p.add_argument("--group", type=int, default=4, help="completions per prompt")
    p.add_argument("--max-new-tokens", type=int, default=24)
    p.add_argument("--tool-tasks", action="store_true",
                   help="also train on tool tasks: whole playouts on the tool platform, rewarded by success")
    p.add_argument("--tool-max-new-tokens", type=int, default=64, help="per tool-task turn")
    p.add_argument("--tool-max-turns", type=int, default=3, help="assistant turns per tool-task playout")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--kl-beta", type=float, default=0.05)
    p.add_argument("--clip-eps", type=float, default=0.2)
    p.add_argument("--selection", choices=("variance", "random", "all"), default="variance")
    p.add_argument("--select-every", type=int, default=10, help="K: refresh the selection every K steps")
    p.add_argument("--candidates", type=int, default=32, help="prompts scored per refresh")
    p.add_argument("--keep", type=int, default=8, help="prompts kept per refresh")
    p.add_argument("--select-samples", type=int, default=4, help="completions per candidate when scoring")
    p.add_argument("--async", dest="asynchronous", action="store_true", help="actor in its own thread")
    p.add_argument("--actor-process", action="store_true",
                   help="with --async: the actor in a separate (forked) process instead of a thread")
    p.add_argument("--max-staleness", type=int, default=1, help="with --async: oldest policy version allowed")
    p.add_argument("--reward-timeout", type=float, default=2.0)
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--reward-model", help="reward model directory (`cidermill sft rm`): an extra reward")
    p.add_argument("--reward-model-weight", type=float, default=0.5,
                   help="W: the reward model adds W * sigmoid(score) (default 0.5)")
    p.add_argument("--seed", type=int, default=0)


def run(args, beam_args) -> int:
    import copy
    import os

    import torch

    from corpus.errors import ConfigError
    from training.checkpoint import checkpoint_dir, load_model_from_checkpoint
    from training.posttrain.chat import END
    from training.posttrain.data import read_rows, rl_prompts
    from training.posttrain.rl import RLConfig, run_rl
    from training.posttrain.setup import save_chat_tokenizer
    from training.tokenizer import load_tokenizer
    for name in ("steps", "prompts", "group", "select_every", "candidates", "keep", "select_samples",
                 "tool_max_new_tokens", "tool_max_turns"):
        if getattr(args, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= 1")
    if args.max_staleness < 0:
        raise ConfigError("--max-staleness must be >= 0")
    torch.manual_seed(args.seed)
    ck = checkpoint_dir(args.sft)
    tok = load_tokenizer(args.tokenizer or os.path.join(args.sft, "tokenizer"))
    if tok.token_to_id(END) is None:
        raise ConfigError("the tokenizer has no chat markers: give the SFT run's tokenizer")
    model = load_model_from_checkpoint(ck)
    ref = copy.deepcopy(model)
    pool, dropped = rl_prompts(tok, read_rows(args.data, split="train"), model.config.max_seq_len, args.max_new_tokens,
                               args.tool_max_new_tokens if args.tool_tasks else None)
    if not pool:
        raise ConfigError(f"{args.data}: no verifiable prompt fits the context (dropped: {dict(dropped)})")
    os.makedirs(args.out, exist_ok=True)
    save_chat_tokenizer(tok, args.out)
    cfg = RLConfig(steps=args.steps, prompts_per_step=args.prompts, group=args.group,
                   max_new_tokens=args.max_new_tokens, temperature=args.temperature, lr=args.lr,
                   clip_eps=args.clip_eps, kl_beta=args.kl_beta, selection=args.selection,
                   select_every=args.select_every, select_candidates=args.candidates, select_keep=args.keep,
                   select_samples=args.select_samples, asynchronous=args.asynchronous,
                   max_staleness=args.max_staleness if args.asynchronous else 0,
                   actor_process=args.asynchronous and args.actor_process,
                   reward_timeout=args.reward_timeout, seed=args.seed, checkpoint_every=args.checkpoint_every,
                   tool_max_turns=args.tool_max_turns, tool_max_new_tokens=args.tool_max_new_tokens)
    extra = None
    if args.reward_model:
        from training.posttrain.reward_model import load_reward_model, reward_model_reward
        if args.reward_model_weight < 0:
            raise ConfigError("--reward-model-weight must be >= 0")
        rm = load_reward_model(args.reward_model)
        if rm.config.vocab_size < tok.get_vocab_size() or rm.config.max_seq_len < model.config.max_seq_len:
            raise ConfigError(f"{args.reward_model}: reward model (vocab {rm.config.vocab_size}, context "
                              f"{rm.config.max_seq_len}) cannot score this policy's sequences (vocab "
                              f"{tok.get_vocab_size()}, context {model.config.max_seq_len})")
        extra = reward_model_reward(rm, args.reward_model_weight, tok.token_to_id(END))
    print(f"rl: {len(pool)} prompts ({sum(dropped.values())} set aside: {dict(dropped)})")
    res = run_rl(model, ref, pool, cfg, args.out, tok.token_to_id(END), tok.decode, log=print, extra_reward=extra,
                 tokenizer=tok)
    print(f"rl: step {res.step}, {res.generations} completions, {res.new_tokens} tokens sampled, "
          f"stale batches dropped {res.dropped_stale}, reward errors {res.reward_errors}, "
          f"non-finite steps {res.nan_steps or 'none'}")
    return 0
