#!/usr/bin/env python3
"""Validates providers/*.json against providers/schema.json (JSON Schema 2020-12).

The Swift loader is the authority on what AuthKit accepts; this check keeps the
published schema honest: every bundled descriptor must satisfy it, and the
schema itself must be a valid 2020-12 schema.
"""
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(__file__).resolve().parents[2] / "providers"
schema = json.loads((root / "schema.json").read_text(encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

passed = failed = 0
for path in sorted(root.glob("*.json")):
    if path.name == "schema.json":
        continue
    errors = list(validator.iter_errors(json.loads(path.read_text(encoding="utf-8"))))
    if errors:
        failed += 1
        for error in errors:
            location = ".".join(str(p) for p in error.absolute_path) or "(document)"
            print(f"FAIL {path.name}: {location}: {error.message}")
    else:
        passed += 1
        print(f"PASS {path.name}")
print(f"schema: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
