"""The judge's schema files are real JSON Schema (draft 2020-12) and stay inside the subset the judge's own validator
checks (autograder/judge/json_schema.hpp): every file passes the metaschema, uses no keyword outside the subset, and
refers only to its own $defs; every worker group (groups_*.py) has its declaration and every declaration its group;
and a few answers are judged by the real validator as the judge's unit tests judge them.

    test_worker_schemas.py COURSE_ROOT
"""

import glob
import json
import os
import re
import sys

try:
    import jsonschema
except ImportError:
    if os.environ.get("COURSE_OFFLINE"):  # an installed torch without the course's tool-chain (the lent GPU)
        print("SKIPPED: jsonschema is not installed here")
        sys.exit(77)
    raise

root = sys.argv[1]
schemas = os.path.join(root, "autograder", "schemas")
worker = os.path.join(schemas, "worker")
# json_schema.cpp's kKeywords and kAnnotations: what the judge checks, and what it may ignore
SUBSET = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "const",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "$ref",
}
ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "$defs"}
problems = []


def walk(schema, where, defs):
    """Every keyword of `schema` (and of its subschemas) is in the subset; every $ref names one of its $defs."""
    if isinstance(schema, bool):
        return
    for key, value in schema.items():
        if key not in SUBSET | ANNOTATIONS:
            problems.append(f"{where}: keyword {key!r} is outside the judge's subset")
        if key == "$ref" and not (value.startswith("#/$defs/") and value[len("#/$defs/") :] in defs):
            problems.append(f"{where}: $ref {value!r} is not one of the file's own $defs")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), (dict, bool)):
            walk(schema[key], f"{where}/{key}", defs)
    for name, sub in schema.get("properties", {}).items():
        walk(sub, f"{where}/properties/{name}", defs)
    for name, sub in schema.get("$defs", {}).items():
        walk(sub, f"{where}/$defs/{name}", defs)


files = sorted(glob.glob(os.path.join(worker, "*.schema.json"))) + [os.path.join(schemas, "phase.schema.json")]
validators = {}
for path in files:
    with open(path) as f:
        schema = json.load(f)
    name = os.path.relpath(path, root)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        problems.append(f"{name}: not a valid draft 2020-12 schema: {e.message}")
        continue
    if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        problems.append(f"{name}: $schema is not draft 2020-12")
    walk(schema, name, set(schema.get("$defs", {})))
    validators[os.path.basename(path)] = jsonschema.Draft202012Validator(schema)

# one declaration per group the worker registers, and no declaration of a group that does not exist
groups = set()
for path in glob.glob(os.path.join(root, "autograder", "worker", "groups_*.py")):
    with open(path) as f:
        groups |= set(re.findall(r'^@group\("([a-z0-9_]+)"\)', f.read(), re.M))
declared = {os.path.basename(p)[: -len(".schema.json")] for p in glob.glob(os.path.join(worker, "*.schema.json"))}
for g in sorted(groups - declared):
    problems.append(f"worker group {g!r} has no autograder/schemas/worker/{g}.schema.json")
for g in sorted(declared - groups - {"response"}):
    problems.append(f"autograder/schemas/worker/{g}.schema.json declares a group the worker does not have")


def judged(group, answer):
    """As the judge does (worker_answer.cpp): the envelope, then an ok answer's other keys against the group's."""
    envelope = validators["response.schema.json"]
    if not envelope.is_valid(answer):
        return False
    if answer["status"] != "ok":
        return True
    with open(os.path.join(worker, "response.schema.json")) as f:
        keys = set(json.load(f)["properties"])
    return validators[f"{group}.schema.json"].is_valid({k: v for k, v in answer.items() if k not in keys})


# the answers of the judge's unit test (judge_unit_tests.cpp), by the real validator
ok = {
    "nonce": "abc",
    "group": "harness",
    "status": "ok",
    "timing": {"import": 0.5},
    "tests": [{"id": "T.test_a", "outcome": "passed"}, {"id": "T.test_b", "outcome": "failed", "message": "x"}],
}
error = {"nonce": "abc", "group": "harness", "status": "error", "error": "ImportError: x", "error_in_submission": True}
odd = json.loads(json.dumps(ok))
odd["tests"][1]["outcome"] = "passed, honestly"
partial = {"nonce": "abc", "group": "profile", "status": "ok", "trace": "trace.json"}
forged = {
    "nonce": "abc",
    "group": "inspect",
    "status": "ok",
    "elsewhere": [],  # planted/02_schema/forged_response
    "ops": [
        {
            "name": "course::mm16",
            "overload": "",
            "kernels": [],
            "tags": ["pt2_compliant_tag"],
            "schema": "course::mm16(Tensor a, Tensor b) -> Tensor",
        }
    ],
}
for group, answer, expected in (
    ("harness", ok, True),
    ("harness", error, True),
    ("harness", odd, False),
    ("profile", partial, False),
    ("inspect", forged, True),
):
    if judged(group, answer) != expected:
        problems.append(f"{group} answer {json.dumps(answer)[:80]}: {'accepted' if not expected else 'refused'}")
phase = validators["phase.schema.json"]
if not phase.is_valid({"phase": "done", "text": "done"}) or phase.is_valid({"phase": "running", "text": ""}):
    problems.append("phase.schema.json does not judge phase.json as the judge's unit test does")

for p in problems:
    print("FAIL:", p)
print(
    f"{len(files)} schema files, {len(groups)} worker groups: "
    + ("ok" if not problems else f"{len(problems)} problems")
)
sys.exit(1 if problems else 0)
