#include "client/load/server_sample.h"

namespace onemodel::load {

ServerSample SampleServer(client::Client& client, const std::vector<client::Session>& sessions) {
  ServerSample sample;
  try {
    sample.server = client.Stats();
    for (const client::Session& session : sessions) {
      sample.sessions.push_back(client.Stats(session.id()).session());
    }
    sample.ok = true;
  } catch (const std::exception& e) {
    sample.error = e.what();
  }
  return sample;
}

int64_t ArenaReservedBytes(const ServerSample& sample) {
  int64_t bytes = 0;
  for (const v1::SessionStats& session : sample.sessions) bytes += session.arena().reserved_bytes();
  return bytes;
}

}  // namespace onemodel::load
