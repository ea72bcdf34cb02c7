"""How often the portal's verdict on a MySQL prediction is MariaDB's: the differential test, as figures.

    .venv/bin/python -m benchmarks.differential [--archive PATH] [--reference-url URL]

On the Termite archive when it is present (TERMITE_ARCHIVE, else ../shared/termite/Termite.zip), else on
the project's demo benchmark. Predictions come from tests/differential/generator.py; each is judged by
MariaDB (TERMITE_REFERENCE_MYSQL_URL, else mysql://root@127.0.0.1:3306/; scratch databases c12c_*,
dropped at the end) and by the portal's scorer (tests/differential/harness.py).

Prints the agreement rate overall and per generator rule, the false positives (the portal says correct,
MariaDB does not) and false negatives by rule, and every disagreement as (question id, rule, portal
outcome, MariaDB verdict): never SQL, never values.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from benchmarks.score_speed import DEFAULT_ARCHIVE, load_source
from tests.differential.harness import run_differential, summary_lines

DEFAULT_REFERENCE_URL = "mysql://root@127.0.0.1:3306/"


def archive_and_reference(description: str) -> argparse.Namespace:
    """The arguments of a benchmark judged on MariaDB: `--archive` and `--reference-url`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--archive", type=Path, default=Path(os.environ.get("TERMITE_ARCHIVE", DEFAULT_ARCHIVE))
    )
    parser.add_argument(
        "--reference-url", default=os.environ.get("TERMITE_REFERENCE_MYSQL_URL", DEFAULT_REFERENCE_URL)
    )
    return parser.parse_args()


def main() -> None:
    args = archive_and_reference(__doc__.splitlines()[0])
    started = time.perf_counter()
    name, source = load_source(args.archive)
    with tempfile.TemporaryDirectory(prefix="differential-") as directory:
        result = run_differential(source, reference_url=args.reference_url, directory=Path(directory))
    print(f"benchmark: {name}")
    print("\n".join(summary_lines(result)))
    steps = ", ".join(f"{step} {seconds:.2f} s" for step, seconds in result.seconds.items())
    print(f"\ntime: {time.perf_counter() - started:.2f} s ({steps})")


if __name__ == "__main__":
    main()
