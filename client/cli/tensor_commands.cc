// put, run, get, describe.
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "client/cli/attribute.h"
#include "client/cli/commands.h"
#include "client/cli/progress.h"
#include "client/cli/tensor_file.h"

namespace onemodel::cli {
namespace {

// --session and --keep-session, shared by the commands that may open a session.
struct SessionChoice {
  std::string id;
  bool keep = false;
};

void AddSessionChoice(CLI::App& command, SessionChoice& choice) {
  CLI::Option* id = command.add_option("--session", choice.id, "an open session (else a new one)");
  command
      .add_flag("--keep-session", choice.keep,
                "keep the new session open (its id is printed first)")
      ->excludes(id);
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
  put->add_option("file", options->file, "tensor file (.npy or .pb)")
      ->required()
      ->check(CLI::ExistingFile);
  AddSessionChoice(*put, options->session);
  put->add_flag("--requires-grad", options->put.requires_grad, "record operations on it");
  AddPlacement(*put, options->put.placement);
  put->add_option("--target", options->put.target,
                  "overwrite this tensor in place (same type and shape) and print its handle")
      ->excludes("--placement")
      ->excludes("--requires-grad");
  put->callback([&global, options] {
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
  CLI::App* run = app.add_subcommand("run", "run one operation; print the output's handle");
  run->add_option("op", options->op, "operation (Add, MatMul, Softmax, ...)")->required();
  run->add_option("--input,-i", options->inputs, "a handle or a .npy/.pb file, once per input");
  run->add_option("--attr,-a", options->attributes, "name=value (axis=1, axes=[0,2], scale=0.5)");
  AddSessionChoice(*run, options->session);
  run->add_flag("--no-grad", options->no_grad, "record nothing for backward");
  AddPlacement(*run, options->placement);
  run->add_option("--out,-o", options->out, "also download the output to this .npy/.pb file");
  run->callback([&global, options] {
    std::vector<client::RunInput> inputs;
    for (const std::string& input : options->inputs) {
      if (IsTensorFileName(input)) {
        inputs.emplace_back(ReadTensorFile(input));
      } else {
        inputs.emplace_back(client::TensorHandle(input));
      }
    }
    std::vector<client::NamedAttr> attributes;
    for (const std::string& text : options->attributes) attributes.push_back(ParseAttribute(text));
    client::RunBuilder run;
    run.Op(options->op, inputs, attributes, options->placement);
    client::Client client = Connect(global.connection);
    client::Session session = OpenSession(client, options->session.id, options->session.keep);
    const client::TensorHandle output = session.Run(run.NoGrad(options->no_grad)).back();
    std::cout << output.id() << "\n";
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
  CLI::App* get = app.add_subcommand("get", "download a tensor to a .npy or .pb file");
  get->add_option("handle", options->handle, "tensor handle")->required();
  get->add_option("--session", options->session, "the handle's session")->required();
  get->add_option("--out,-o", options->out, "output file (.npy or .pb)")->required();
  get->callback([&global, options] {
    client::Client client = Connect(global.connection);
    client::Session session = client.AttachSession(options->session);
    const client::Progress progress =
        TransferProgress("get " + options->handle, ProgressEnabled(global));
    WriteTensorFile(options->out, session.Get(client::TensorHandle(options->handle), progress));
  });
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
    std::cout << session.Describe(client::TensorHandle(options->handle)).info().DebugString();
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
