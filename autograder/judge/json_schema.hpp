// A validator of the JSON Schema subset (draft 2020-12) that the course's schema files use (autograder/schemas/):
// type, properties, required, additionalProperties, items, minItems, maxItems, enum, const, minimum, maximum,
// minLength, maxLength, and $ref to the schema's own $defs. Annotations ($schema, $id, title, description, $comment)
// are ignored; any other keyword is a course bug (std::logic_error), so a schema file cannot ask for more than is
// checked (autograder/tests/test_worker_schemas.py holds the same files to the real JSON Schema).
#pragma once
#include <string>

#include "json.hpp"

namespace judge {

// The first place where `value` breaks `schema`, as "at $.path: what" (a JSON path from the root); "" when it
// matches.
std::string schema_mismatch(const json& schema, const json& value);

}  // namespace judge
