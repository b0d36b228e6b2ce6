"""`cidermill train --config FILE`: train a model on token shards (resumes from the latest checkpoint).

`cidermill train --recipe FILE`: continued pre-training stages in order (training/recipe.py)."""
from __future__ import annotations

HELP = ("train a model preset on token shards (AdamW, schedule, eval, checkpoints, resume, distillation); "
        "a `vision:` config section adds image stages (text, align, adapt: training/vision/run_config.py); "
        "--recipe runs continued pre-training stages in order (training/recipe.py)")
EXAMPLES = """examples:
  cidermill train --config out/demo/train/train.yaml
  cidermill train --recipe training/recipes/demo.yaml --out out/recipe
  cidermill train --recipe R.yaml --stop-after 40     # then rerun without it: resumes exactly
"""
BEAM = False


def configure(p):
    import argparse
    import textwrap
    p.formatter_class = argparse.RawDescriptionHelpFormatter   # keep the examples one a line
    p.description = textwrap.fill(HELP, 100)
    p.epilog = EXAMPLES
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--config", help="train config (YAML/JSON); see training/train_config.py")
    which.add_argument("--recipe", help="stage recipe (YAML); see training/recipe.py and training/recipes/")
    p.add_argument("--out", help="run directory (overrides train.out)")
    p.add_argument("--steps", type=int, help="total steps (overrides train.steps; not with --recipe)")
    p.add_argument("--teacher", help="distil from this checkpoint directory (overrides distill.teacher)")
    p.add_argument("--no-resume", action="store_true", help="start fresh even if the run has checkpoints")
    p.add_argument("--stop-after", type=int, help="stop after this step, counted over all stages of a recipe "
                                                   "(to test resuming)")


def run(args, beam_args) -> int:
    from tqdm import tqdm
    from training.train_config import load_config
    from training.trainer import Trainer

    if args.recipe:
        return _run_recipe(args)
    cfg = load_config(args.config)
    if args.out:
        cfg.train.out = args.out
    if args.steps:
        cfg.train.steps = args.steps
    if cfg.vision is not None:
        from training.vision.run_config import parse_vision
        cfg.train.steps = parse_vision(cfg.vision).total_steps
    if args.teacher:
        cfg.distill.teacher = args.teacher
    bar = tqdm(total=cfg.train.steps, desc="train", unit="step", mininterval=2)

    def progress(rec):
        # one redraw at most every mininterval (set_postfix alone would redraw on every step)
        bar.set_postfix(loss=f"{rec['loss']:.3f}", **({"eval": f"{rec['eval_loss']:.3f}"} if "eval_loss" in rec else {}),
                        refresh=False)
        bar.update(rec["step"] - bar.n)

    if cfg.vision is not None:
        return _run_vision(cfg, args, bar, progress)
    res = Trainer(cfg, resume=not args.no_resume, progress=progress, stop_after=args.stop_after).run()
    bar.close()
    if res["resumed_from"]:
        print(f"resumed from step {res['resumed_from']}")
    print(f"trained {res['steps']} steps ({res['params']:,} parameters); final loss {res['final_loss']}; "
          f"checkpoint {res['checkpoint']}; log {cfg.train.out}/log.jsonl")
    return 0


def _run_vision(cfg, args, bar, progress) -> int:
    """A config with a `vision:` section: staged multimodal training (training/vision/stages.py)."""
    from training.vision.stages import VisionTrainer

    res = VisionTrainer(cfg, resume=not args.no_resume, progress=progress, stop_after=args.stop_after,
                        log=lambda m: bar.write(m)).run()
    bar.close()
    if res["resumed_from"]:
        print(f"resumed from step {res['resumed_from']}")
    for st in res["evals"]["stages"]:
        figs = ", ".join(f"{k} {st[k]:.3f}" for k in ("text_loss", "qa", "grounding") if st.get(k) is not None)
        print(f"stage {st['name']:<6} (to step {st['end_step']}): {figs or 'no evaluation'}")
    print(f"trained {res['steps']} steps; checkpoint {res['checkpoint']}; evaluation {cfg.train.out}/vision_eval.json")
    return 0


def _run_recipe(args) -> int:
    from tqdm import tqdm

    from corpus.errors import ConfigError
    from training.recipe import REPORT_FILE, load_recipe, run_recipe, stage_steps
    if args.steps or args.teacher:
        raise ConfigError("--steps and --teacher apply to --config runs; a recipe sets steps by token budget")
    recipe = load_recipe(args.recipe)
    out = args.out or recipe.out
    bar = tqdm(total=sum(stage_steps(recipe, s) for s in recipe.stages), desc="recipe", unit="step", mininterval=2)

    def progress(rec):
        bar.set_postfix(stage=rec["stage"], loss=f"{rec['loss']:.3f}", refresh=False)
        bar.update(rec["step"] - bar.n)

    rep = run_recipe(recipe, out, resume=not args.no_resume, stop_after=args.stop_after, progress=progress,
                     log=lambda m: bar.write(m))
    bar.close()
    for s in rep["stages"]:
        seen = ", ".join(f"{k} {v:,}" for k, v in (s["tokens_by_source"] or {}).items()) or "n/a (image stage)"
        ev = f"; eval {s['last_eval_loss']:.3f}" if s["last_eval_loss"] is not None else ""
        print(f"stage {s['name']:<10} {s['steps']}/{s['planned_steps']} steps, seq {s['seq_len']}: "
              f"loss {s['last_loss']:.3f}{ev}; tokens {seen}")
    state = "finished" if rep["finished"] else "stopped (rerun to resume)"
    print(f"recipe {rep['recipe']} {state}; checkpoint {rep['checkpoint']}; report {out}/{REPORT_FILE}")
    return 0
