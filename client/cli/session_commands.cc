// session create, session close.
#include <iostream>
#include <map>
#include <memory>

#include "client/cli/commands.h"

namespace onemodel::cli {
namespace {

void AddCreate(CLI::App& session, GlobalOptions& global) {
  auto options = std::make_shared<client::SessionOptions>();
  options->client_name = "onemodel-cli";
  const std::map<std::string, v1::KernelChoice> kernels = {{"fast", v1::KERNEL_CHOICE_FAST},
                                                           {"exact", v1::KERNEL_CHOICE_EXACT}};
  CLI::App* create = session.add_subcommand("create", "open a session and print its id");
  create->add_option("--kernels", options->kernels, "fast or exact (default: the server's)")
      ->transform(CLI::CheckedTransformer(kernels));
  create->add_option("--memory-limit", options->memory_limit_bytes, "bytes (suffixes: KiB, MiB)")
      ->transform(CLI::AsSizeValue(false));
  create->add_option("--arena-chunk", options->arena_chunk_bytes, "bytes (suffixes: KiB, MiB)")
      ->transform(CLI::AsSizeValue(false));
  create->add_option("--idle-timeout-ms", options->idle_timeout_ms, "idle timeout");
  create->add_option("--name", options->client_name, "client name for the server's logs");
  create->callback([&global, options] {
    client::Client client = Connect(global.connection);
    std::cout << client.CreateSession(*options).Detach() << "\n";
  });
}

void AddClose(CLI::App& session, GlobalOptions& global) {
  auto id = std::make_shared<std::string>();
  CLI::App* close = session.add_subcommand("close", "close a session, releasing all it holds");
  close->add_option("id", *id, "session id")->required();
  close->callback([&global, id] {
    client::Client client = Connect(global.connection);
    const v1::CloseSessionReply reply = client.AttachSession(*id).Close();
    std::cout << "released_buffers=" << reply.released_buffers()
              << " released_bytes=" << reply.released_bytes() << "\n";
  });
}

}  // namespace

void AddSessionCommands(CLI::App& app, GlobalOptions& global) {
  CLI::App* session = app.add_subcommand("session", "create or close sessions");
  session->require_subcommand(1);
  AddCreate(*session, global);
  AddClose(*session, global);
}

}  // namespace onemodel::cli
