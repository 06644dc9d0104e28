// The one check of a host:port address, shared by onemodeld's --listen and --metrics-listen
// and the clients' --server, so that what one side accepts the other reads the same way.
//
//   if (std::string why = HostPortProblem("127.0.0.1:99999", 1); !why.empty()) { refuse }
#pragma once

#include <string>
#include <string_view>

namespace onemodel {

// Empty when `text` is host:port with a port from `min_port` to 65535 and a host that is not
// empty, holds no space, no scheme ("http://") and, when it is an IPv6 address, comes in
// brackets ("[::1]:50051"); else what is wrong, to follow "must be host:port ...; ".
std::string HostPortProblem(std::string_view text, int min_port);

}  // namespace onemodel
