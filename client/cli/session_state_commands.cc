// backward, release, reset-arena: commands that change what an open session holds.
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "client/cli/commands.h"
#include "client/cli/tensor_file.h"

namespace onemodel::cli {
namespace {

void AddBackward(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::string root;
    std::vector<std::string> inputs;
    std::string grad_output;
    std::string session;
    bool retain_graph = false;
    v1::Placement placement = v1::PLACEMENT_UNSPECIFIED;
  };
  auto options = std::make_shared<Options>();
  CLI::App* backward = app.add_subcommand(
      "backward", "gradients of a root tensor with respect to inputs; print their handles");
  backward->add_option("root", options->root, "handle of the tensor to differentiate")->required();
  backward->add_option("--input,-i", options->inputs, "a tensor to get the gradient of, once each")
      ->required();
  backward->add_option("--grad-output,-g", options->grad_output,
                       "a handle or .npy/.pb file: the root's gradient (needed unless the root "
                       "has one element)");
  backward->add_option("--session", options->session, "the handles' session")->required();
  backward->add_flag("--retain-graph", options->retain_graph,
                     "keep the graph for another backward");
  const std::map<std::string, v1::Placement> placements = {{"pool", v1::PLACEMENT_POOL},
                                                           {"arena", v1::PLACEMENT_ARENA}};
  backward->add_option("--placement", options->placement, "where the gradients go: pool or arena")
      ->transform(CLI::CheckedTransformer(placements));
  backward->callback([&global, options] {
    client::BackwardOptions backward_options{.retain_graph = options->retain_graph,
                                             .placement = options->placement};
    const std::string& g = options->grad_output;
    if (!g.empty()) {
      backward_options.grad_output = IsTensorFileName(g)
                                         ? client::RunInput(ReadTensorFile(g))
                                         : client::RunInput(client::TensorHandle(g));
    }
    std::vector<client::TensorHandle> inputs(options->inputs.begin(), options->inputs.end());
    client::Client client = Connect(global.connection);
    client::Session session = client.AttachSession(options->session);
    for (const client::TensorHandle& grad :
         session.Backward(client::TensorHandle(options->root), inputs, backward_options)) {
      std::cout << grad.id() << "\n";
    }
  });
}

void AddRelease(CLI::App& app, GlobalOptions& global) {
  struct Options {
    std::vector<std::string> handles;
    std::string session;
  };
  auto options = std::make_shared<Options>();
  CLI::App* release = app.add_subcommand(
      "release", "forget handles (a pool buffer goes back to the pool); print how many");
  release->add_option("handles", options->handles, "tensor handles")->required();
  release->add_option("--session", options->session, "the handles' session")->required();
  release->callback([&global, options] {
    std::vector<client::TensorHandle> handles(options->handles.begin(), options->handles.end());
    client::Client client = Connect(global.connection);
    const int64_t released = client.AttachSession(options->session).Release(handles);
    std::cout << "released=" << released << "\n";  // after the call: nothing on a failure
  });
}

void AddResetArena(CLI::App& app, GlobalOptions& global) {
  auto session_id = std::make_shared<std::string>();
  auto options = std::make_shared<client::ResetArenaOptions>();
  CLI::App* reset = app.add_subcommand(
      "reset-arena", "reclaim a session's arena (its arena handles become stale)");
  reset->add_option("--session", *session_id, "the session")->required();
  CLI::Option* trim =
      reset->add_flag("--trim", options->trim, "also give the arena's chunks back to the pool");
  reset
      ->add_option("--keep-bytes", options->keep_bytes,
                   "with --trim, chunk bytes to keep (suffixes: KiB, MiB)")
      ->transform(CLI::AsSizeValue(false))
      ->needs(trim);
  reset->callback([&global, session_id, options] {
    client::Client client = Connect(global.connection);
    const v1::ResetArenaReply reply = client.AttachSession(*session_id).ResetArena(*options);
    std::cout << "stale_handles=" << reply.stale_handles()
              << " arena_chunks=" << reply.arena().chunks()
              << " arena_reserved_bytes=" << reply.arena().reserved_bytes() << "\n";
  });
}

}  // namespace

void AddSessionStateCommands(CLI::App& app, GlobalOptions& global) {
  AddBackward(app, global);
  AddRelease(app, global);
  AddResetArena(app, global);
}

}  // namespace onemodel::cli
