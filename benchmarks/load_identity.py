"""Check that two versions of saturate load every file the same way (for work on the loaders).

Loads a corpus with this checkout's saturate and with another one (``--ref``, a folder holding
a ``saturate/`` package, e.g. ``git archive main saturate | tar -x -C /tmp/ref``), each in its own
process, and compares what ``saturate.load`` gives (the tidy table, its run facts, the x axis
name, the warnings, or the error) and what ``read_table_file`` gives, with
``pandas.testing.assert_frame_equal``. The corpus: every file and folder under the shared real
curves, ``tests/data`` and ``sample_runs``, files fuzzed by the strategies of
``tests/fuzz_files.py`` and tables with repeated run names, shuffled rows, repeated and missing
steps and parameters, in CSV, TSV, JSON Lines, Parquet and gzip. Run::

    .venv/bin/python benchmarks/load_identity.py --ref /tmp/ref [--fuzz 400] [--tables 300]

Prints each difference and a count; exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from realcurves import DATA_DIR

ROOT = Path(__file__).resolve().parents[1]


def write_corpus(folder: Path, fuzz: int, tables: int) -> None:
    """Fuzzed files (hypothesis, derandomised) and random structured tables into ``folder``."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fuzz_files import fuzzed_file  # noqa: PLC0415 - test helpers, only here
    from hypothesis import HealthCheck, given, settings  # noqa: PLC0415

    found: list[tuple[str, bytes]] = []

    @settings(max_examples=fuzz, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(fuzzed_file())
    def collect(case: tuple[str, bytes]) -> None:
        found.append(case)

    if fuzz:
        collect()
    for i, (name, data) in enumerate(found):
        (folder / f"fz{i:04d}_{name}").write_bytes(data)
    rng = np.random.default_rng(7)
    for i in range(tables):
        _write_table(folder, i, rng)


def _write_table(folder: Path, i: int, rng: np.random.Generator) -> None:
    layout = rng.choice(["long", "wide"])
    rows = []
    for r in range(int(rng.integers(1, 8))):
        n = int(rng.integers(0, 40))
        steps = rng.integers(0, 30, n).astype(float)
        if rng.random() < 0.2:
            steps[rng.random(n) < 0.2] = np.nan
        run, algo = str(rng.integers(0, 3)) if rng.random() < 0.7 else f"r{r}", rng.choice(
            ["ppo", "sac", "dqn", ""])
        for s in steps:
            row = {"run": run, "algo": algo or None, "lr": rng.choice([1e-3, 3e-4, np.nan]),
                   "step": s, "seed": int(rng.integers(0, 3))}
            if rng.random() < 0.5:
                row["timestamp"] = float(rng.integers(0, 5))
            value = rng.choice([rng.normal(), np.nan, np.inf], p=[0.93, 0.05, 0.02])
            if layout == "long":
                row.update(metric=rng.choice(["reward", "loss", "eval/acc"]), value=value)
            else:
                row.update(reward=value, loss=rng.normal() if rng.random() < 0.8 else np.nan)
            rows.append(row)
    df = pd.DataFrame(rows) if rows else pd.DataFrame({"run": [], "step": [], "reward": []})
    for col, chance, make in (("run_id", 0.3, lambda d: d["run"].astype(str) + "_id"),
                              ("experiment", 0.2, lambda d: rng.choice(["e1", "e2"], len(d))),
                              ("run_status", 0.2, lambda d: rng.choice(["FINISHED", "RUNNING"], len(d))),
                              ("gpu_hours", 0.2, lambda d: np.arange(len(d)) * 0.5)):
        if rng.random() < chance:
            df[col] = make(df)
    if rng.random() < 0.3:
        df = df.sample(frac=1, random_state=int(rng.integers(0, 1000)))
    kind = rng.choice(["csv", "tsv", "csv.gz", "jsonl", "parquet"])
    path = folder / f"st{i:04d}.{kind}"
    if kind == "jsonl":
        df.to_json(path, orient="records", lines=True)
    elif kind == "parquet":
        df.to_parquet(path)
    else:
        df.to_csv(path, index=False, sep="\t" if kind == "tsv" else ",")


def cases(corpus: Path) -> list[str]:
    """Every file and folder to load."""
    found: list[str] = []
    for root in (DATA_DIR, ROOT / "tests/data", ROOT / "sample_runs"):
        if root.is_dir():
            found += sorted(str(p) for p in root.rglob("*") if p.is_file() and "mlruns" not in p.parts)
            found += [str(root), *sorted(str(p) for p in root.iterdir())]
    found += sorted(str(p) for p in corpus.iterdir())
    return list(dict.fromkeys(found))


def dump(names: list[str], out: str) -> None:
    """Load every case with the saturate this process imports; pickle the results to ``out``."""
    import saturate  # noqa: PLC0415 - the version under test is chosen by PYTHONPATH
    from saturate.ingest.files import read_table_file  # noqa: PLC0415

    def run(read):  # noqa: ANN001, ANN202
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got = read()
            except Exception as exc:  # noqa: BLE001 - an error is a result to compare
                got = (type(exc).__name__, str(exc))
        return got, [(w.category.__name__, str(w.message)) for w in caught]

    def loaded(path: str) -> object:
        got = saturate.load(path)
        if hasattr(got, "points"):  # a saturate.Table
            return {"table": got.points, "facts": got.runs, "x": got.axis.name}
        # a version before the Table: the frame, its run facts and axis in DataFrame.attrs
        return {"table": got, "facts": saturate.run_facts(got), "x": got.attrs.get("compute_name")}

    def read_file(path: str) -> object:
        got = read_table_file(path)
        return got.to_frame() if hasattr(got, "to_frame") else got

    results = {}
    for name in names:
        results[("load", name)] = run(lambda name=name: loaded(name))
        if Path(name).is_file():
            results[("file", name)] = run(lambda name=name: read_file(name))
    with open(out, "wb") as fh:
        pickle.dump(results, fh)


def differences(a: dict, b: dict) -> list[str]:
    """One line per case whose results differ."""
    out = []
    for key in a:
        (ra, wa), (rb, wb) = a[key], b[key]
        try:
            assert wa == wb, f"warnings {wa} != {wb}"
            if isinstance(ra, tuple) or isinstance(rb, tuple):
                assert ra == rb, f"{ra} != {rb}"
                continue
            pairs = ra.items() if isinstance(ra, dict) else [("table", ra)]
            for part, value in pairs:
                other = rb[part] if isinstance(rb, dict) else rb
                if isinstance(value, pd.DataFrame):
                    pd.testing.assert_frame_equal(value, other, check_exact=True)
                else:
                    assert value == other, f"{part}: {value!r} != {other!r}"
        except AssertionError as exc:
            out.append(f"{key}: {str(exc)[:400]}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", type=Path, help="folder holding the other saturate/ package")
    parser.add_argument("--fuzz", type=int, default=400, help="fuzzed files")
    parser.add_argument("--tables", type=int, default=300, help="random structured tables")
    parser.add_argument("--dump", nargs=2, help=argparse.SUPPRESS)  # list file, output (internal)
    args = parser.parse_args()
    if args.dump:
        dump(Path(args.dump[0]).read_text().splitlines(), args.dump[1])
        return 0
    if args.ref is None or not (args.ref / "saturate").is_dir():
        parser.error("--ref must name a folder holding a saturate/ package")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        write_corpus(corpus, args.fuzz, args.tables)
        listing = Path(tmp) / "cases.txt"
        listing.write_text("\n".join(cases(corpus)))
        results = []
        for i, path in enumerate((args.ref, ROOT)):
            out = Path(tmp) / f"{i}.pkl"
            env = {**os.environ, "PYTHONPATH": str(path)}
            subprocess.run([sys.executable, __file__, "--dump", str(listing), str(out)],
                           check=True, env=env, cwd=tmp)
            with open(out, "rb") as fh:
                results.append(pickle.load(fh))
        diffs = differences(*results)
    for line in diffs:
        print("DIFF", line)
    print(f"{len(results[0])} results, {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
