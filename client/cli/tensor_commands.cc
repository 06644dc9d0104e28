// put, run, get, describe.
#include <cctype>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "client/cli/attribute.h"
#include "client/cli/commands.h"
#include "client/cli/progress.h"
#include "client/cli/tensor_file.h"
#include "client/cli/tensor_print.h"

namespace onemodel::cli {
namespace {

// --session and --keep-session, shared by the commands that may open a session.
struct SessionChoice {
  std::string id;
  bool keep = false;
};

void AddSessionChoice(CLI::App& command, SessionChoice& choice) {
  CLI::Option* id = command.add_option("--session", choice.id, "an open session");
  command
      .add_flag("--keep-session", choice.keep,
                "open a new session and keep it (its id is printed first)")
      ->excludes(id);
}

// Throws UsageError when the command would print a handle of a session that closes as the
// command ends (no --session, no --keep-session) and keeps nothing else (`saved`: -o FILE).
void RequireSessionChoice(const std::string& command, const SessionChoice& choice, bool saved) {
  if (!choice.id.empty() || choice.keep || saved) return;
  throw UsageError(command +
                   " needs --session ID (from `onemodel session create`) or --keep-session: "
                   "without either, its handle would name a session that closes when the "
                   "command ends" +
                   (command == "run" ? " (or -o FILE to keep only the output)" : ""));
}

CLI::Option* AddPlacement(CLI::App& command, v1::Placement& placement) {
  const std::map<std::string, v1::Placement> placements = {{"pool", v1::PLACEMENT_POOL},
                                                           {"arena", v1::PLACEMENT_ARENA}};
  return command.add_option("--placement", placement, "pool or arena")
      ->transform(CLI::CheckedTransformer(placements));
}

void AddPut(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string file;
    SessionChoice session;
    client::PutOptions put;
  };
  auto options = std::make_shared<Options>();
  CLI::App* put =
      app.add_subcommand("put", "upload a tensor from a .npy or .pb file; print its handle");
  put->add_option("file", options->file, "tensor file (.npy or .pb)")->required();
  AddSessionChoice(*put, options->session);
  put->add_flag("--requires-grad", options->put.requires_grad, "record operations on it");
  AddPlacement(*put, options->put.placement);
  put->add_option("--target", options->put.target,
                  "overwrite this tensor in place (same type and shape) and print its handle")
      ->excludes("--placement")
      ->excludes("--requires-grad");
  put->callback([&global, options] {
    RequireSessionChoice("put", options->session, false);
    client::TensorData data = ReadTensorFile(options->file);
    client::Client client = Connect(global.connection);
    client::Session session = OpenSession(client, options->session.id, options->session.keep);
    client::PutOptions put = options->put;
    put.progress = TransferProgress("put " + options->file, ProgressEnabled(global));
    std::cout << session.Put(std::move(data), put).id() << "\n";
  });
}

void AddRun(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string op;
    std::vector<std::string> inputs;
    std::vector<std::string> attributes;
    SessionChoice session;
    bool no_grad = false;
    v1::Placement placement = v1::PLACEMENT_UNSPECIFIED;
    std::string out;
  };
  auto options = std::make_shared<Options>();
  CLI::App* run = app.add_subcommand(
      "run", "run one operation; print the output's handle (unless only -o keeps it)");
  run->add_option("op", options->op, "operation (Add, MatMul, Softmax, ...)")->required();
  run->add_option("--input,-i", options->inputs, "a handle or a .npy/.pb file, once per input");
  run->add_option("--attr,-a", options->attributes, "name=value (axis=1, axes=[0,2], scale=0.5)");
  AddSessionChoice(*run, options->session);
  run->add_flag("--no-grad", options->no_grad, "record nothing for backward");
  AddPlacement(*run, options->placement);
  run->add_option("--out,-o", options->out, "also download the output to this .npy/.pb file");
  run->callback([&global, options] {
    RequireSessionChoice("run", options->session, !options->out.empty());
    std::vector<client::RunInput> inputs;
    for (const std::string& input : options->inputs) {
      if (IsTensorFileName(input)) {
        inputs.emplace_back(ReadTensorFile(input));
      } else {
        inputs.emplace_back(client::TensorHandle(input));
      }
    }
    std::vector<client::NamedAttr> attributes;
    for (const std::string& text : options->attributes) {
      try {
        attributes.push_back(ParseAttribute(text));
      } catch (const client::Error& e) {
        throw UsageError(e.what());  // the command line is wrong, not the server
      }
    }
    client::RunBuilder run;
    run.Op(options->op, inputs, attributes, options->placement);
    client::Client client = Connect(global.connection);
    client::Session session = OpenSession(client, options->session.id, options->session.keep);
    const client::TensorHandle output = session.Run(run.NoGrad(options->no_grad)).back();
    // A throwaway session (-o alone) closes with the command: its handle would name nothing.
    if (!options->session.id.empty() || options->session.keep) std::cout << output.id() << "\n";
    if (options->out.empty()) return;
    WriteTensorFile(options->out, session.Get(output, TransferProgress("get " + output.id(),
                                                                       ProgressEnabled(global))));
  });
}

void AddGet(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string handle;
    std::string session;
    std::string out;
  };
  auto options = std::make_shared<Options>();
  CLI::App* get = app.add_subcommand(
      "get", "download a tensor to a .npy or .pb file, or print it (summarized when large)");
  get->add_option("handle", options->handle, "tensor handle")->required();
  get->add_option("--session", options->session, "the handle's session")->required();
  get->add_option("--out,-o", options->out, "output file (.npy or .pb); without it: print");
  get->callback([&global, options] {
    client::Client client = Connect(global.connection);
    client::Session session = client.AttachSession(options->session);
    const client::Progress progress =
        TransferProgress("get " + options->handle, ProgressEnabled(global));
    const client::TensorData data = session.Get(client::TensorHandle(options->handle), progress);
    if (!options->out.empty()) return WriteTensorFile(options->out, data);
    std::cout << FormatTensor(data) << "\n";
  });
}

std::string Join(const google::protobuf::RepeatedField<int64_t>& values) {
  std::string out = "[";
  for (int64_t v : values) out += (out.size() > 1 ? ", " : "") + std::to_string(v);
  return out + "]";
}

// One "name  value" line per field of `info`.
void PrintTensorInfo(const v1::TensorInfo& info) {
  std::string placement = v1::Placement_Name(info.placement()).substr(sizeof("PLACEMENT_") - 1);
  for (char& c : placement) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string layout = info.layout();
  if (info.block_size() > 0) layout += " (" + std::to_string(info.block_size()) + " per block)";
  const std::pair<const char*, std::string> rows[] = {
      {"handle", info.handle()},
      {"dtype", info.data_type_name()},
      {"shape", Join(info.dims())},
      {"strides", Join(info.strides()) + " elements"},
      {"offset", std::to_string(info.offset()) + " elements"},
      {"layout", layout},
      {"placement", placement},
      {"requires_grad", info.requires_grad() ? "true" : "false"},
      {"grad_fn", info.grad_fn().empty() ? "-" : info.grad_fn()},
      {"version", std::to_string(info.version())},
      {"buffer", "id " + std::to_string(info.buffer_id()) + ", generation " +
                     std::to_string(info.generation()) + ", " +
                     std::to_string(info.buffer_bytes()) + " bytes"},
  };
  for (const auto& [name, value] : rows) {
    std::cout << name << std::string(15 - std::string_view(name).size(), ' ') << value << "\n";
  }
}

void AddDescribe(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string handle;
    std::string session;
  };
  auto options = std::make_shared<Options>();
  CLI::App* describe = app.add_subcommand("describe", "print what the server knows of a tensor");
  describe->add_option("handle", options->handle, "tensor handle")->required();
  describe->add_option("--session", options->session, "the handle's session")->required();
  describe->callback([&global, options] {
    client::Client client = Connect(global.connection);
    client::Session session = client.AttachSession(options->session);
    PrintTensorInfo(session.Describe(client::TensorHandle(options->handle)).info());
  });
}

}  // namespace

void AddTensorCommands(CLI::App& app, GlobalOptions& global) {
  AddPut(app, global);
  AddRun(app, global);
  AddGet(app, global);
  AddDescribe(app, global);
}

}  // namespace onemodel::cli
