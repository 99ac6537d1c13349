"""Validates assets/openapi.json against the OpenAPI 3.1 specification
with `openapi-spec-validator` (the schema of the specification, plus its
checks: path parameters declared, unique operation ids, references that
resolve).

Usage: python openapi_valid.py PATH_TO_OPENAPI_JSON
Exits non-zero with the validator's errors when the document is invalid.
Run by tests/sdk.rs.
"""
import copy
import json
import sys

from openapi_spec_validator import OpenAPIV31SpecValidator

with open(sys.argv[1], encoding="utf-8") as f:
    document = json.load(f)
assert document["openapi"].startswith("3.1"), document["openapi"]

errors = list(OpenAPIV31SpecValidator(document).iter_errors())
for error in errors[:20]:
    print("invalid:", error.message[:500], "at", list(error.absolute_path))
if errors:
    sys.exit(1)

# The validator bites: a wrong request body, and a path parameter that is
# not declared, are refused.
broken = copy.deepcopy(document)
broken["paths"]["/v1/embeddings"]["post"]["requestBody"] = {"content": "json"}
assert list(OpenAPIV31SpecValidator(broken).iter_errors()), "a bad requestBody passed"
broken = copy.deepcopy(document)
del broken["paths"]["/v1/models/{id}"]["get"]["parameters"]
assert list(OpenAPIV31SpecValidator(broken).iter_errors()), "an undeclared {id} passed"

print("valid OpenAPI", document["openapi"], "with", len(document["paths"]), "paths")
