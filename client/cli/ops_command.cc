// ops: the operations the server runs, from its ListOperations RPC.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "client/cli/commands.h"

namespace onemodel::cli {
namespace {

// "int", "float", "string", "ints", "floats".
std::string KindName(v1::AttributeKind kind) {
  std::string name = v1::AttributeKind_Name(kind).substr(sizeof("ATTRIBUTE_KIND_") - 1);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// `a` as the CLI's --attr syntax writes it: -1, 1.5, NHWC, [1, 1].
std::string AttributeText(const v1::Attribute& a) {
  auto real = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  auto list = [](const auto& values, auto format) {
    std::string out = "[";
    for (const auto v : values) out += (out.size() > 1 ? ", " : "") + format(v);
    return out + "]";
  };
  switch (a.value_case()) {
    case v1::Attribute::kI:
      return std::to_string(a.i());
    case v1::Attribute::kF:
      return real(a.f());
    case v1::Attribute::kS:
      return a.s();
    case v1::Attribute::kInts:
      return list(a.ints().values(), [](int64_t v) { return std::to_string(v); });
    case v1::Attribute::kFloats:
      return list(a.floats().values(), real);
    case v1::Attribute::VALUE_NOT_SET:
      break;
  }
  return "";
}

// "X" or "A, B".
std::string Inputs(const v1::OperationSpec& op) {
  std::string out;
  for (const v1::OperationInput& input : op.inputs()) {
    out += (out.empty() ? "" : ", ") + input.name() + (input.optional() ? "?" : "") +
           (input.variadic() ? "..." : "");
  }
  return out;
}

// "axis=-1, scale=1" (required ones without "=").
std::string Attributes(const v1::OperationSpec& op) {
  std::string out;
  for (const v1::AttributeSpec& a : op.attributes()) {
    out += (out.empty() ? "" : ", ") + a.name() +
           (a.required() ? "" : "=" + AttributeText(a.default_value()));
  }
  return out;
}

std::string Padded(const std::string& text, size_t width) {
  return text + std::string(width > text.size() ? width - text.size() : 1, ' ');
}

// One line per operation under a header.
void PrintTable(const std::vector<v1::OperationSpec>& ops) {
  size_t name_width = 4, inputs_width = 6, attributes_width = 10;
  for (const v1::OperationSpec& op : ops) {
    name_width = std::max(name_width, op.name().size());
    inputs_width = std::max(inputs_width, Inputs(op).size());
    attributes_width = std::max(attributes_width, Attributes(op).size());
  }
  auto row = [&](const std::string& name, const std::string& inputs, const std::string& attributes,
                 const std::string& grad, const std::string& doc) {
    std::cout << Padded(name, name_width + 2) << Padded(inputs, inputs_width + 2)
              << Padded(attributes, attributes_width + 2) << Padded(grad, 6) << doc << "\n";
  };
  row("NAME", "INPUTS", "ATTRIBUTES", "GRAD", "DOC");
  for (const v1::OperationSpec& op : ops) {
    row(op.name(), Inputs(op), Attributes(op), op.differentiable() ? "yes" : "no", op.doc());
  }
  std::cout << "\n`onemodel ops NAME` shows one operation's attributes: kind, default, meaning.\n";
}

// One operation in detail.
void PrintOperation(const v1::OperationSpec& op) {
  std::cout << op.name() << "(" << Inputs(op) << ")\n  " << op.doc() << "\n"
            << "  differentiable: " << (op.differentiable() ? "yes" : "no") << "\n";
  if (op.attributes().empty()) {
    std::cout << "  attributes: none\n";
    return;
  }
  std::cout << "  attributes:\n";
  size_t width = 0;
  for (const v1::AttributeSpec& a : op.attributes()) width = std::max(width, a.name().size());
  for (const v1::AttributeSpec& a : op.attributes()) {
    const std::string when =
        a.required() ? "required" : "default " + AttributeText(a.default_value());
    std::cout << "    " << Padded(a.name(), width + 2) << Padded(KindName(a.kind()), 8)
              << Padded(when, 18) << a.doc() << "\n";
  }
  std::cout << "  e.g. onemodel run " << op.name() << " --session S";
  for (const v1::OperationInput& input : op.inputs()) std::cout << " -i " << input.name();
  for (const v1::AttributeSpec& a : op.attributes()) {
    if (a.required()) std::cout << " -a " << a.name() << "=...";
  }
  std::cout << "\n";
}

}  // namespace

void AddOpsCommand(CLI::App& app, GlobalOptions& global) {
  auto name = std::make_shared<std::string>();
  CLI::App* ops = app.add_subcommand(
      "ops", "list the operations the server runs (with a NAME: that one in detail)");
  ops->add_option("name", *name, "an operation name (exact; a near miss gets suggestions)");
  ops->callback([&global, name] {
    const std::vector<v1::OperationSpec> specs = Connect(global.connection).ListOperations(*name);
    if (name->empty()) return PrintTable(specs);
    for (const v1::OperationSpec& op : specs) PrintOperation(op);
  });
}

}  // namespace onemodel::cli
