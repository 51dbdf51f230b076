// The judge's JSON Schema validator (json_schema.hpp): the subset its schema files use, first mismatch only.
#include "json_schema.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

namespace judge {

namespace {

const std::set<std::string> kAnnotations = {"$schema", "$id", "title", "description", "$comment", "$defs"};
const std::set<std::string> kKeywords = {"type",      "properties", "required", "additionalProperties",
                                         "items",     "minItems",   "maxItems", "enum",
                                         "const",     "minimum",    "maximum",  "minLength",
                                         "maxLength", "$ref"};

std::string type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "something else";
  }
}

// JSON Schema's types: an integer is any number without a fractional part (1.0 included); a boolean is no number.
bool is_type(const json& v, const std::string& type) {
  if (type == "integer") {
    if (!v.is_number()) return false;
    if (v.is_number_integer()) return true;
    const double d = v.get<double>();
    return std::isfinite(d) && std::floor(d) == d;  // not a value comparison: a whole number, JSON Schema's integer
  }
  if (type == "number") return v.is_number();
  return type_name(v) == type;
}

// A value as a mismatch quotes it: short.
std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  std::string check(const json& schema, const json& v, const std::string& at, int depth = 0) const {
    if (depth > 32) throw std::logic_error("a schema nests deeper than 32 levels");
    if (schema.is_boolean()) return schema.get<bool>() ? "" : mismatch(at, "no value is allowed here");
    if (!schema.is_object()) throw std::logic_error("a schema must be an object or a boolean");
    for (auto& [k, _] : schema.items())
      if (!kAnnotations.count(k) && !kKeywords.count(k))
        throw std::logic_error("schema keyword '" + k + "' is not supported by the judge's validator");
    if (schema.contains("$ref")) {
      if (std::string why = check(resolve(schema["$ref"]), v, at, depth + 1); !why.empty()) return why;
    }
    for (auto rule : {&Validator::check_type, &Validator::check_value, &Validator::check_number,
                      &Validator::check_string, &Validator::check_object, &Validator::check_array})
      if (std::string why = (this->*rule)(schema, v, at, depth); !why.empty()) return why;
    return "";
  }

 private:
  const json& root_;

  static std::string mismatch(const std::string& at, const std::string& what) { return "at " + at + ": " + what; }

  const json& resolve(const json& ref) const {
    const std::string prefix = "#/$defs/";
    if (!ref.is_string() || ref.get<std::string>().rfind(prefix, 0) != 0)
      throw std::logic_error("only $refs to the schema's own $defs are supported (\"#/$defs/NAME\")");
    const std::string name = ref.get<std::string>().substr(prefix.size());
    if (!root_.contains("$defs") || !root_["$defs"].contains(name))
      throw std::logic_error("$ref to an undefined $defs entry " + name);
    return root_["$defs"][name];
  }

  std::string check_type(const json& schema, const json& v, const std::string& at, int) const {
    if (!schema.contains("type")) return "";
    const json& t = schema["type"];
    bool ok = false;
    for (auto& one : t.is_array() ? t : json::array({t})) ok = ok || is_type(v, one.get<std::string>());
    return ok ? ""
              : mismatch(at,
                         "expected " + (t.is_array() ? t.dump() : t.get<std::string>()) + ", found " + type_name(v));
  }

  std::string check_value(const json& schema, const json& v, const std::string& at, int) const {
    if (schema.contains("const") && v != schema["const"])
      return mismatch(at, "expected " + shown(schema["const"]) + ", found " + shown(v));
    if (schema.contains("enum")) {
      for (auto& allowed : schema["enum"])
        if (v == allowed) return "";
      return mismatch(at, shown(v) + " is not one of " + shown(schema["enum"]));
    }
    return "";
  }

  std::string check_number(const json& schema, const json& v, const std::string& at, int) const {
    if (!v.is_number()) return "";
    const double x = v.get<double>();
    if (schema.contains("minimum") && x < schema["minimum"].get<double>())
      return mismatch(at, shown(v) + " is below the minimum " + shown(schema["minimum"]));
    if (schema.contains("maximum") && x > schema["maximum"].get<double>())
      return mismatch(at, shown(v) + " is above the maximum " + shown(schema["maximum"]));
    return "";
  }

  std::string check_string(const json& schema, const json& v, const std::string& at, int) const {
    if (!v.is_string()) return "";
    // (lengths in bytes: the files bound only ASCII text, where bytes and characters agree)
    const std::size_t n = v.get_ref<const std::string&>().size();
    if (schema.contains("minLength") && n < schema["minLength"].get<std::size_t>())
      return mismatch(at, "a string shorter than " + schema["minLength"].dump() + " characters");
    if (schema.contains("maxLength") && n > schema["maxLength"].get<std::size_t>())
      return mismatch(at, "a string longer than " + schema["maxLength"].dump() + " characters");
    return "";
  }

  std::string check_object(const json& schema, const json& v, const std::string& at, int depth) const {
    if (!v.is_object()) return "";
    if (schema.contains("required"))
      for (auto& key : schema["required"])
        if (!v.contains(key.get<std::string>()))
          return mismatch(at, "the key '" + key.get<std::string>() + "' is missing");
    const json none = json::object();
    const json& properties = schema.contains("properties") ? schema["properties"] : none;
    for (auto& [key, value] : v.items()) {
      const std::string where = at + "." + key;
      if (properties.contains(key)) {
        if (std::string why = check(properties[key], value, where, depth + 1); !why.empty()) return why;
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra == false) return mismatch(at, "the key '" + key + "' is not declared");
        if (std::string why = check(extra, value, where, depth + 1); !why.empty()) return why;
      }
    }
    return "";
  }

  std::string check_array(const json& schema, const json& v, const std::string& at, int depth) const {
    if (!v.is_array()) return "";
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<std::size_t>())
      return mismatch(at, "fewer than " + schema["minItems"].dump() + " items");
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<std::size_t>())
      return mismatch(at, "more than " + schema["maxItems"].dump() + " items");
    if (schema.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i)
        if (std::string why = check(schema["items"], v[i], at + "[" + std::to_string(i) + "]", depth + 1); !why.empty())
          return why;
    return "";
  }
};

}  // namespace

std::string schema_mismatch(const json& schema, const json& value) {
  return Validator(schema).check(schema, value, "$");
}

}  // namespace judge
