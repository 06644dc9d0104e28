// onemodeld: the OneModel tensor service. `onemodeld --help` lists every setting.
#include "server/config.h"
#include "server/daemon.h"
#include "server/logging.h"

int main(int argc, char** argv) {
  onemodel::server::ServerConfig config;
  if (const int exit_code = onemodel::server::ParseConfig(argc, argv, &config); exit_code >= 0) {
    return exit_code;
  }
  onemodel::server::ConfigureLogging(config.log_level, config.log_format);
  return onemodel::server::RunDaemon(config);
}
