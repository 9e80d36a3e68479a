"""Registry of command families for the differential tester.

Each family is a module tests/diff/families/<name>.py exporting:

  NAME        the family name used by --family
  GENERATORS  list of (weight, gen) where gen(ctx) -> Cmd | [Cmd, ...]
  CREATORS    optional list of (weight, gen): generators that create keys of
              this family's type.  The keyspace family mixes in the CREATORS
              of every registered family (TYPE, RENAME, COPY, MOVE, SCAN TYPE
              then see every type that exists).
  MIX         optional {other_family: fraction}: that fraction of this
              family's commands comes from the other family's GENERATORS
              (e.g. strings streams also DEL, RENAME and EXPIRE their keys).
  MIX_CREATORS optional fraction of commands taken from all CREATORS.

To add a family: write the module and add its name to REGISTRY below.
Generators must follow the determinism rules in gencore.py.
"""

import importlib

# Order in which families run by default.
REGISTRY = [
    "connection",
    "keyspace",
    "strings",
    "hashes",
    "lists",
    "zsets",
    "sets",
    "sort",
    "multi",
    "scripting",
    "functions",
    "lualibs",
    "hll",
    "geo",
    "streams",
]


# Families run only when named with --family (they expect server
# arguments: bigstrings wants --ram-head 16K and an --ssd-dir; see
# tests/run_all.sh).
EXTRA = [
    "bigstrings",
]


def load(names=None):
    """Return {name: module} for the given names (default: all), in order."""
    names = list(REGISTRY) if not names else names
    out = {}
    for n in names:
        if n not in REGISTRY + EXTRA:
            raise KeyError("unknown family %r (known: %s)"
                           % (n, ", ".join(REGISTRY + EXTRA)))
        out[n] = importlib.import_module("families." + n)
    return out


def load_all():
    return {n: importlib.import_module("families." + n) for n in REGISTRY}
