"""How long `manage.py score` takes as a whole process, as a person at a shell waits for it: the
interpreter, Django's set-up, the command's imports and the scoring itself.

    .venv/bin/python -m benchmarks.score_command [--runs 5] [--bird PATH]

A scratch embedded portal (SQLite, no services, a temporary TERMITE_DATA_DIR, production's defaults) is
migrated and given the demo (`load_demo`) once, outside the timing, with a file that predicts each of the
demo's questions by its own gold query, in MySQL as written, so that every prediction is transpiled. The
project's modules are compiled to bytecode first (`compileall`), as Python's first run leaves them: with
PYTHONDONTWRITEBYTECODE set (this machine's shells; the Docker image compiles them when it is built) every
run would compile them again, which is no one's steady state.
Prints figures and module names only, never SQL:
- the best and the median wall time of --runs runs of each command, one after another: `python -c pass` and
  `python -c "import django"` (what any command pays before its own code), `manage.py score --help` (Django's
  set-up and the command's imports, no scoring) and `manage.py score predictions.jsonl --version demo-1.0`,
  the whole command; target: its best at most 0.6 s, 3 x BIRD's evaluator CLI on this machine (issue 31);
- with --bird PATH (BIRD's `evaluation.py`, from AlibabaResearch/DAMO-ConvAI, bird/llm/src; it imports
  `func_timeout`, which `pip install --target <its folder> func-timeout` puts beside it), BIRD's CLI timed
  the same way on the same questions, and the ratio of the two bests; without it, a line saying the
  comparison was not run. BIRD reads a predictions JSON, a gold SQL file and a folder of SQLite databases:
  they are written into the scratch folder, with the demo's copies as the portal built them and, as both
  prediction and gold, each question's gold as the portal runs it (transpiled to SQLite), so that BIRD runs
  the queries the portal runs for these predictions, less the test suites' (TS-EA). BIRD's bare SQLite
  lacks the MySQL functions and collations the portal installs, so some of them fail there, quickly: its
  own accuracy line says how many ran;
- where the start-up goes: one more run of the command under `python -X importtime`, and the 15 modules
  whose import took longest (cumulative: with what they import), each with the module that first imported
  it ("-": the interpreter, before the command's code). importtime's bookkeeping inflates every figure: read
  them as shares of the run, not as times.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
TARGET_BIRD_RATIO = 3.0
TOP_MODULES = 15
PROJECT_PACKAGES = ("termite_site", "evaluation", "leaderboard")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--bird", type=Path, help="BIRD's evaluation.py, to time its CLI on the same questions"
    )
    args = parser.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", *PROJECT_PACKAGES], cwd=ROOT, check=True)
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
        print(
            f"{args.runs} runs each, the project's bytecode compiled first; "
            f"target: the whole command's best <= {TARGET_SECONDS} s"
        )
        print(f"{'command':<55} {'best s':>7} {'median s':>8}")
        best = {}
        for name, command in commands.items():
            times = [run_seconds(env, command) for _ in range(args.runs)]
            best[name] = min(times)
            print(f"{name:<55} {best[name]:>7.3f} {statistics.median(times):>8.3f}")
        whole = best[f"manage.py score predictions.jsonl --version {label}"]
        verdict = "PASS" if whole <= TARGET_SECONDS else "FAIL"
        print(f"the whole command's best: {whole / TARGET_SECONDS:.2f} x the target, {verdict}")
        if args.bird:
            compare_with_bird(env, args.bird.resolve(), Path(directory, "bird"), label, whole, args.runs)
        else:
            print("BIRD's evaluator CLI: comparison not run (--bird PATH to BIRD's evaluation.py)")
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


def compare_with_bird(
    env: dict[str, str], evaluator: Path, directory: Path, label: str, whole: float, runs: int
) -> None:
    """Time BIRD's CLI on the version's questions, as many runs as the portal's command, and print the
    ratio of the portal's best to BIRD's; a BIRD that cannot run is said, with its error's last line."""
    arguments = [str(evaluator), *bird_input(directory, label)]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, *arguments], cwd=directory, env=env, capture_output=True, text=True, check=False
        )
        times.append(time.perf_counter() - start)
        if done.returncode:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            print(f"BIRD's evaluator CLI: not compared, it failed ({last})")
            return
    accuracy = next(line.split()[-1] for line in done.stdout.splitlines() if line.startswith("accuracy"))
    name = "BIRD's evaluation.py (its CLI)"
    print(f"{name:<55} {min(times):>7.3f} {statistics.median(times):>8.3f}")
    ratio = whole / min(times)
    verdict = "PASS" if ratio <= TARGET_BIRD_RATIO else "FAIL"
    print(
        f"the whole command's best: {ratio:.2f} x BIRD's (target <= {TARGET_BIRD_RATIO:g} x), {verdict}; "
        f"BIRD's own accuracy on these pairs {accuracy} %"
    )


def bird_input(directory: Path, label: str) -> list[str]:
    """BIRD's input for the version's scored questions, written into `directory`: the SQLite copies as
    `db/<database>/<database>.sqlite`, the predictions (`predict_dev.json`: position -> SQL, a separator
    and the database), the gold (`dev_gold.sql`: SQL, a tab and the database, a line each) and the
    difficulty of each question (`dev.json`), which only splits BIRD's accuracy table: the questions are
    dealt round its three levels, so that none is empty (BIRD divides by each level's count). Returns the
    arguments of BIRD's CLI."""
    from evaluation.grading import database_paths, gold_questions
    from evaluation.models import BenchmarkVersion

    version = BenchmarkVersion.objects.get(label=label)
    questions = [question for question in gold_questions(version) if question.valid]
    paths = database_paths(version)
    for slug in {question.db_id for question in questions}:
        (directory / "db" / slug).mkdir(parents=True)
        shutil.copyfile(paths[slug], directory / "db" / slug / f"{slug}.sqlite")
    sqls = [question.sql_sqlite for question in questions]
    if any("\n" in sql or "\t" in sql for sql in sqls):
        sys.exit("BIRD's gold file holds a query a line, and one of these spans lines or holds a tab")
    predictions = {
        str(position): f"{sql}\t----- bird -----\t{question.db_id}"
        for position, (sql, question) in enumerate(zip(sqls, questions, strict=True))
    }
    (directory / "predict_dev.json").write_text(json.dumps(predictions))
    gold_lines = (f"{sql}\t{question.db_id}\n" for sql, question in zip(sqls, questions, strict=True))
    (directory / "dev_gold.sql").write_text("".join(gold_lines))
    levels = ("simple", "moderate", "challenging")
    difficulties = [{"difficulty": levels[position % 3]} for position in range(len(questions))]
    (directory / "dev.json").write_text(json.dumps(difficulties))
    return [
        "--predicted_sql_path",
        f"{directory}/",
        "--ground_truth_path",
        f"{directory}/",
        "--data_mode",
        "dev",
        "--db_root_path",
        f"{directory}/db/",
        "--diff_json_path",
        str(directory / "dev.json"),
    ]


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
