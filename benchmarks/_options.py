"""The options every benchmark takes besides its sizes: `--quick`, a tiny size that shows in seconds that the
benchmark still runs end to end (the test suite runs each one so; its figures mean nothing), and `--database-url`,
an empty database to run on instead of an embedded server of the benchmark's own (the suite passes its test server's,
so no benchmark starts a server of its own there)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence


def add_common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true",
                        help="a tiny size that only shows the benchmark runs end to end; its figures mean nothing")
    parser.add_argument("--database-url", default=None, metavar="URL",
                        help="an empty PostgreSQL database to run on instead of an embedded server of its own "
                             "(migrated if it never was; refused if it holds people, as the benchmark empties "
                             "tables). DATABASE_URL is not read: it names the app's own database")


def parse_sizes(parser: argparse.ArgumentParser, argv: Sequence[str] | None,
                quick: Mapping[str, object]) -> argparse.Namespace:
    """The parsed arguments; with `--quick`, the sizes in `quick` replace the defaults, while a size given on the
    command line still wins (`--quick --rounds 3`)."""
    args = parser.parse_args(argv)
    unknown = set(quick) - set(vars(args))
    if unknown:
        raise ValueError(f"quick sizes for options the parser does not have: {sorted(unknown)}")
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args(argv)
    return args
