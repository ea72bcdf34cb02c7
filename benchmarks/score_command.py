"""How long `manage.py score` takes as a whole process, as a person at a shell waits for it: the
interpreter, Django's set-up, the command's imports and the scoring itself.

    .venv/bin/python -m benchmarks.score_command [--runs 5]

A scratch embedded portal (SQLite, no services, a temporary TERMITE_DATA_DIR, production's defaults) is
migrated and given the demo (`load_demo`) once, outside the timing, with a file that predicts each of the
demo's questions by its own gold query, in MySQL as written, so that every prediction is transpiled.
Prints figures and module names only, never SQL:
- the best and the median wall time of --runs runs of each command, one after another: `python -c pass` and
  `python -c "import django"` (what any command pays before its own code), `manage.py score --help` (Django's
  set-up and the command's imports, no scoring) and `manage.py score predictions.jsonl --version demo-1.0`,
  the whole command; target: its best at most 0.6 s, 3 x BIRD's evaluator CLI on this machine (issue 31);
- where the start-up goes: one more run of the command under `python -X importtime`, and the 15 modules
  whose import took longest (cumulative: with what they import), each with the module that first imported
  it ("-": the interpreter, before the command's code). importtime's bookkeeping inflates every figure: read
  them as shares of the run, not as times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.score_memory import manage, portal_env
from benchmarks.score_speed import ROOT

TARGET_SECONDS = 0.6
TOP_MODULES = 15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="score-command-") as directory:
        env = portal_env(Path(directory))
        predictions, label = demo_predictions(env, Path(directory, "predictions.jsonl"))
        score = ["manage.py", "score", str(predictions), "--version", label]
        commands = {
            "python -c pass": ["-c", "pass"],
            'python -c "import django"': ["-c", "import django"],
            "manage.py score --help": ["manage.py", "score", "--help"],
            f"manage.py score predictions.jsonl --version {label}": score,
        }
        print(f"{args.runs} runs each; target: the whole command's best <= {TARGET_SECONDS} s")
        print(f"{'command':<55} {'best s':>7} {'median s':>8}")
        best = {}
        for name, command in commands.items():
            times = [run_seconds(env, command) for _ in range(args.runs)]
            best[name] = min(times)
            print(f"{name:<55} {best[name]:>7.3f} {statistics.median(times):>8.3f}")
        whole = best[f"manage.py score predictions.jsonl --version {label}"]
        verdict = "PASS" if whole <= TARGET_SECONDS else "FAIL"
        print(f"the whole command's best: {whole / TARGET_SECONDS:.2f} x the target, {verdict}")
        print_import_times(env, score, Path(directory))


def demo_predictions(env: dict[str, str], path: Path) -> tuple[Path, str]:
    """Migrate the scratch portal and load the demo; write the file of the demo's gold as predictions, and
    return it with the demo version's label."""
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo")
    os.environ.clear()
    os.environ.update(env)
    # Django and the demo only now: the settings are read from the scratch portal's environment.
    import django

    django.setup()
    from evaluation.services import DEMO_LABEL
    from leaderboard.demo import demo_gold

    lines = [json.dumps({"question_id": question, "sql": sql}) for question, sql in demo_gold().items()]
    path.write_text("\n".join(lines) + "\n")
    return path, DEMO_LABEL


def run_seconds(env: dict[str, str], arguments: list[str]) -> float:
    """The wall time of one run of the interpreter with these arguments, from the project's folder."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(arguments)} failed:\n{done.stderr.decode()[-3000:]}")
    return seconds


# Runs a script (argv[2:]) as `python script` would, and writes to argv[1], as JSON, which module first
# imported each module: the innermost frame outside the import machinery. importtime cannot say it: a module
# that importlib.import_module loads (an app, an admin module, a URL configuration) is not in its report,
# and what it imports is written as if nothing had imported it.
RECORD_IMPORTERS = """
import atexit, json, runpy, sys

importers = {}


class Recorder:
    def find_spec(self, name, path=None, target=None):
        frame = sys._getframe(1)
        while frame.f_back and (
            frame.f_code.co_filename.startswith("<frozen") or frame.f_globals.get("__name__") == "importlib"
        ):
            frame = frame.f_back
        importers.setdefault(name, frame.f_globals.get("__name__"))


sys.meta_path.insert(0, Recorder())
out, sys.argv = sys.argv[1], sys.argv[2:]
atexit.register(lambda: open(out, "w").write(json.dumps(importers)))
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@dataclass(frozen=True)
class Import:
    module: str
    self_us: int
    cumulative_us: int
    nested: bool  # inside another import of the report


def print_import_times(env: dict[str, str], arguments: list[str], directory: Path) -> None:
    importers_file = directory / "importers.json"
    command = [sys.executable, "-X", "importtime", "-c", RECORD_IMPORTERS, str(importers_file), *arguments]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"manage.py score under importtime failed:\n{done.stderr[-3000:]}")
    imports = read_import_times(done.stderr)
    importers = json.loads(importers_file.read_text())
    total = sum(found.cumulative_us for found in imports if not found.nested)
    print(
        f"\nwhere the start-up goes: the command under python -X importtime, {seconds:.3f} s, of which imports "
        f"{total / 1e6:.3f} s ({len(imports)} modules); the {TOP_MODULES} longest imports:"
    )
    print(f"{'module':<44} {'cumulative ms':>13} {'self ms':>8}  imported by")
    for found in sorted(imports, key=lambda found: found.cumulative_us, reverse=True)[:TOP_MODULES]:
        importer = importers.get(found.module) or "-"  # "-": before the recorder, at the interpreter's start
        importer = "manage.py" if importer == "__main__" else importer
        print(
            f"{found.module:<44} {found.cumulative_us / 1000:>13.1f} {found.self_us / 1000:>8.1f}  {importer}"
        )


def read_import_times(report: str) -> list[Import]:
    """importtime's report: a line per module, after the lines of what it imports, indented by how deep."""
    imports = []
    for line in report.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, cumulative_us, name = line.removeprefix("import time:").split("|")
            nested = name.startswith("  ")  # one blank before every name, two more per level
            imports.append(Import(name.strip(), int(self_us), int(cumulative_us), nested))
    return imports


if __name__ == "__main__":
    main()
