#include "server/ops/op_catalog.h"

#include <cstdlib>
#include <string>

namespace onemodel::server {
namespace {

v1::AttributeKind KindOf(v1::Attribute::ValueCase kind) {
  switch (kind) {
    case v1::Attribute::kI:
      return v1::ATTRIBUTE_KIND_INT;
    case v1::Attribute::kF:
      return v1::ATTRIBUTE_KIND_FLOAT;
    case v1::Attribute::kS:
      return v1::ATTRIBUTE_KIND_STRING;
    case v1::Attribute::kInts:
      return v1::ATTRIBUTE_KIND_INTS;
    case v1::Attribute::kFloats:
      return v1::ATTRIBUTE_KIND_FLOATS;
    case v1::Attribute::VALUE_NOT_SET:
      break;
  }
  return v1::ATTRIBUTE_KIND_UNSPECIFIED;
}

// The table's default text ("-1", "1", "[1, 1]", "[]") as an attribute of `kind`.
v1::Attribute DefaultOf(v1::Attribute::ValueCase kind, std::string_view text) {
  const std::string s(text);
  v1::Attribute a;
  switch (kind) {
    case v1::Attribute::kI:
      a.set_i(std::strtoll(s.c_str(), nullptr, 10));
      break;
    case v1::Attribute::kF:
      a.set_f(std::strtof(s.c_str(), nullptr));
      break;
    case v1::Attribute::kS:
      a.set_s(s);
      break;
    case v1::Attribute::kInts:
    case v1::Attribute::kFloats: {
      const bool ints = kind == v1::Attribute::kInts;
      if (ints) a.mutable_ints();
      if (!ints) a.mutable_floats();
      const char* p = s.c_str() + s.find('[') + 1;
      while (*p != ']' && *p != '\0') {
        char* end = nullptr;
        if (ints) a.mutable_ints()->add_values(std::strtoll(p, &end, 10));
        if (!ints) a.mutable_floats()->add_values(std::strtof(p, &end));
        if (end == p) break;  // "[]"
        p = end + (*end == ',' ? 1 : 0);
      }
      break;
    }
    case v1::Attribute::VALUE_NOT_SET:
      break;
  }
  return a;
}

}  // namespace

void FillOperationSpec(const OpSpec& spec, v1::OperationSpec* out) {
  out->set_name(std::string(spec.name));
  const int first_optional = static_cast<int>(spec.inputs.size()) - spec.optional_inputs;
  for (std::string_view input : spec.inputs) {
    v1::OperationInput* in = out->add_inputs();
    in->set_name(std::string(input));
    in->set_optional(out->inputs_size() > first_optional);
  }
  if (spec.variadic) out->mutable_inputs(out->inputs_size() - 1)->set_variadic(true);
  for (const AttrSpec& attribute : spec.attributes) {
    v1::AttributeSpec* a = out->add_attributes();
    a->set_name(std::string(attribute.name));
    a->set_kind(KindOf(attribute.kind));
    a->set_required(attribute.fallback.empty());
    if (!attribute.fallback.empty()) {
      *a->mutable_default_value() = DefaultOf(attribute.kind, attribute.fallback);
    }
    a->set_doc(std::string(attribute.doc));
  }
  out->set_differentiable(spec.differentiable);
  out->set_doc(std::string(spec.doc));
}

void ListOperations(std::string_view name, v1::ListOperationsReply* reply) {
  if (!name.empty()) {
    return FillOperationSpec(RequireOp(name, grpc::StatusCode::NOT_FOUND), reply->add_operations());
  }
  for (const OpSpec& spec : AllOps()) FillOperationSpec(spec, reply->add_operations());
}

}  // namespace onemodel::server
