"""Checks that every line of stdin is a JSON object valid against a JSON schema (the subset
docs/diagnostics.schema.json uses: type, required, properties, additionalProperties, items,
enum, minimum), prints each object's severity and message, and exits 1 on the first violation.
No jsonschema package is needed."""
import json
import sys

TYPES = {"object": dict, "array": list, "string": str, "integer": int}


def validate(value, schema, path):
    want = TYPES[schema["type"]]
    if not isinstance(value, want) or (want is int and isinstance(value, bool)):
        raise ValueError(f"{path}: expected {schema['type']}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ValueError(f"{path}: {value} < {schema['minimum']}")
    if want is dict:
        for key in schema.get("required", []):
            if key not in value:
                raise ValueError(f"{path}: missing {key!r}")
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                validate(item, props[key], f"{path}.{key}")
            elif schema.get("additionalProperties", True) is False:
                raise ValueError(f"{path}: unexpected {key!r}")
    if want is list:
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{path}[{i}]")


def main():
    schema = json.load(open(sys.argv[1]))
    lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
    if not lines:
        print("no diagnostics")
        return 1
    for n, line in enumerate(lines, 1):
        try:
            obj = json.loads(line)
            validate(obj, schema, f"line {n}")
        except ValueError as e:
            print(f"INVALID: {e}")
            return 1
        where = f"{obj['file']}:{obj['line']}:{obj['column']}" if "file" in obj else "-"
        print(f"{obj['severity']} {where} {obj['message']} notes={len(obj.get('notes', []))} "
              f"hints={len(obj.get('hints', []))}")
    return 0


sys.exit(main())
