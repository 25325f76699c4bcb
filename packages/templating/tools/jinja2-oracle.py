#!/usr/bin/env python3
"""Checks the Jinja2 compatibility table against real Jinja2.

Renders every case of src/fixtures/jinja2-cases.json with the settings the
Python qontract-reconcile uses (SandboxedEnvironment, StrictUndefined, no
trimming unless the case lists `whitespace` options) and compares with the recorded `expected` output / `error` flag.

    pip install jinja2            # 3.1.x
    python3 tools/jinja2-oracle.py          # report differences, exit 1 on any
    python3 tools/jinja2-oracle.py --write  # record Jinja2's answers in the table
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

TABLE = Path(__file__).resolve().parent.parent / "src" / "fixtures" / "jinja2-cases.json"


def render(case):
    options = {name: True for name in case.get("whitespace", [])}
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, **options)
    try:
        return True, env.from_string(case["template"]).render(case["variables"])
    except Exception as e:  # noqa: BLE001 - any failure is an expected-error case
        return False, f"{type(e).__name__}: {e}"


def main():
    write = "--write" in sys.argv
    cases = json.loads(TABLE.read_text())
    differences = 0
    for case in cases:
        ok, result = render(case)
        if write:
            case.pop("expected", None)
            case.pop("error", None)
            if ok:
                case["expected"] = result
            else:
                case["error"] = True
                case["jinja2_error"] = result
            continue
        if ok and case.get("expected") != result:
            differences += 1
            print(f"{case['name']}: jinja2 renders {result!r}, table says {case.get('expected')!r}")
        elif not ok and not case.get("error"):
            differences += 1
            print(f"{case['name']}: jinja2 fails ({result}), table expects output")
    if write:
        TABLE.write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n")
        # Keep the repository's formatter happy (it spells numbers and arrays its own way).
        biome = shutil.which("biome") or str(TABLE.parents[4] / "node_modules" / ".bin" / "biome")
        if Path(biome).exists():
            subprocess.run([biome, "format", "--write", str(TABLE)], check=False, capture_output=True)
        print(f"recorded {len(cases)} cases")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
