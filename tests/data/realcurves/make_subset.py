"""Rebuild the vendored real-curve subset from the full collection (see README.md here).

    python tests/data/realcurves/make_subset.py [--from ../shared/data/realcurves] [--check]

Only the curves the tests read are kept; values are copied unchanged. The gzip files are written
without a timestamp, so a rebuild is byte-identical and ``--check`` can say whether the committed
files still match the collection.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = HERE.parents[3] / "shared" / "data" / "realcurves"

# (game, agent) of the Dopamine baselines the tests use, variant legacy_tf, all 5 seeds.
DOPAMINE_CURVES = (("pong", "Rainbow"), ("breakout", "DQN"))
# The suite tests (tests/test_suites_rliable.py): four games, three agents, all seeds, legacy_tf.
SUITE_GAMES = ("asterix", "breakout", "pong", "seaquest")
SUITE_AGENTS = ("C51", "DQN", "Rainbow")
# The verl metrics the instability diagnostics read (entropy, KL, length, rewards).
VERL_METRICS = (
    "actor/entropy_loss",
    "critic/kl",
    "response_length/mean",
    "critic/rewards/mean",
    "critic/score/mean",
    "test_score/openai/gsm8k",
)


def _gzip_csv(df: pd.DataFrame) -> bytes:
    text = df.to_csv(index=False, lineterminator="\n").encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as fh:
        fh.write(text)
    return buf.getvalue()


def subset(source: Path) -> dict[str, bytes]:
    """``relative path -> bytes`` of every vendored data file, built from ``source``."""
    dopamine = pd.read_csv(source / "dopamine" / "dopamine_baselines_long.csv.gz")
    keep = pd.Series(False, index=dopamine.index)
    for game, agent in DOPAMINE_CURVES:
        keep |= (dopamine["game"] == game) & (dopamine["agent"] == agent)
    suite = dopamine[(dopamine["suite"] == "atari") & (dopamine["variant"] == "legacy_tf")
                     & dopamine["game"].isin(SUITE_GAMES) & dopamine["agent"].isin(SUITE_AGENTS)]
    suite = suite.sort_values(["game", "agent", "seed", "iteration"], kind="stable")
    dopamine = dopamine[keep & (dopamine["variant"] == "legacy_tf")]
    verl = pd.read_csv(source / "verl_llm_ppo" / "verl_gsm8k_ppo_metrics_long.csv")
    verl = verl[verl["metric"].isin(VERL_METRICS)]
    bnsl = "bnsl/four_digit_addition_dataset_size.csv"
    return {
        "dopamine/dopamine_baselines_long.csv.gz": _gzip_csv(dopamine),
        "dopamine/suites_atari_subset.csv.gz": _gzip_csv(suite),
        "verl_llm_ppo/verl_gsm8k_ppo_metrics_long.csv.gz": _gzip_csv(verl),
        bnsl: (source / bnsl).read_bytes(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="source", type=Path, default=DEFAULT_SOURCE,
                        help="the full collection (default: ../shared/data/realcurves)")
    parser.add_argument("--check", action="store_true",
                        help="only compare the committed files with a rebuild")
    args = parser.parse_args()
    if not (args.source / "SOURCES.txt").is_file():
        print(f"error: no real-curve collection at {args.source}", file=sys.stderr)
        return 2
    files = subset(args.source)
    if args.check:
        stale = [rel for rel, data in files.items()
                 if not (HERE / rel).is_file() or (HERE / rel).read_bytes() != data]
        print("stale: " + ", ".join(stale) if stale else "up to date")
        return 1 if stale else 0
    for rel, data in files.items():
        (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
        (HERE / rel).write_bytes(data)
        print(HERE / rel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
