"""The QA-only post-training run: bench/posttrain.py on short table/chart QA (2-row tables,
context 256, the base's pretraining context), the task a ~1.3M-parameter base can learn, so that
SFT and the two RL arms have an accuracy to move. Seeds run as three niced processes (their
parts under bench/results/posttrain-parts/), then merge into bench/results/posttrain_qa.json.

    python bench/posttrain_qa.py [--seeds 0 1 2]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = ["--kinds", "qa", "--max-rows", "2", "--seq", "256", "--items", "400", "--sft-steps", "400",
            "--rl-steps", "12", "--rl-lr", "1e-4", "--eval-per-task", "40"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = ap.parse_args()
    script = os.path.join(HERE, "posttrain.py")
    procs = [subprocess.Popen(["nice", "-n", "5", sys.executable, script, *SETTINGS, "--seeds", str(s),
                               "--name", f"posttrain_qa-seed{s}"]) for s in a.seeds]
    if any(p.wait() for p in procs):
        sys.exit("a seed's run failed")
    subprocess.run([sys.executable, script, "--merge", *[f"posttrain_qa-seed{s}" for s in a.seeds],
                    "--merge-into", "posttrain_qa"], check=True)


if __name__ == "__main__":
    main()
