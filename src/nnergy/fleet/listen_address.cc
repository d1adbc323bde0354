#include "nnergy/fleet/listen_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "nnergy/core/error.h"
#include "nnergy/core/text.h"

namespace nnergy::fleet {

namespace {

[[noreturn]] void bad(std::string_view setting, std::string_view text, const std::string& what) {
  throw InvalidInput(fmt::format("{} '{}': {}", setting, text, what));
}

constexpr const char* kExpected =
    "expected HOST:PORT, [IPV6]:PORT or :PORT (e.g. 127.0.0.1:9464, [::1]:9464, :9464)";

}  // namespace

std::string ListenAddress::civetweb_option() const { return authority(port); }

std::string ListenAddress::authority(std::uint16_t actual_port) const {
  return ipv6 ? fmt::format("[{}]:{}", host, actual_port) : fmt::format("{}:{}", host, actual_port);
}

ListenAddress parse_listen_address(std::string_view text, std::string_view setting) {
  std::string_view host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      bad(setting, text, fmt::format("{}; found no ']:' after the IPv6 address", kExpected));
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      bad(setting, text, fmt::format("{}; found no ':PORT'", kExpected));
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) {
      bad(setting, text, fmt::format("{}; an IPv6 address goes in brackets", kExpected));
    }
  }
  unsigned int port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    bad(setting, text,
        fmt::format("expected a port 0 to 65535 after the last ':', found '{}'", port_text));
  }
  ListenAddress address;
  address.port = static_cast<std::uint16_t>(port);
  if (host.empty()) {
    address.host = "0.0.0.0";
    return address;
  }
  // A name is resolved here, once: civetweb takes numeric addresses only.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string host_text(host);
  if (const int code = getaddrinfo(host_text.c_str(), nullptr, &hints, &found); code != 0) {
    bad(setting, text,
        fmt::format("expected a numeric address or a name this machine resolves, found '{}' "
                    "({}); give e.g. 127.0.0.1:{}",
                    host_text, gai_strerror(code), port));
  }
  char numeric[INET6_ADDRSTRLEN] = {};
  if (found->ai_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(found->ai_addr)->sin6_addr, numeric,
              sizeof numeric);
    address.ipv6 = true;
  } else {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, numeric,
              sizeof numeric);
  }
  freeaddrinfo(found);
  address.host = numeric;
  return address;
}

void check_can_listen(const ListenAddress& address, std::string_view setting) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (address.ipv6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(address.port);
    inet_pton(AF_INET6, address.host.c_str(), &a->sin6_addr);
    length = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(address.port);
    inet_pton(AF_INET, address.host.c_str(), &a->sin_addr);
    length = sizeof(sockaddr_in);
  }
  const int fd = socket(address.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw RuntimeFailure(fmt::format("socket() for {} failed: {}", setting, std::strerror(errno)));
  }
  // The server sets SO_REUSEADDR too, so a port left in TIME_WAIT is not "in use".
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const int result = bind(fd, reinterpret_cast<sockaddr*>(&storage), length);
  const int error = errno;
  close(fd);
  if (result == 0) return;
  const std::string where = address.authority(address.port);
  switch (error) {
    case EADDRINUSE:
      throw InvalidInput(fmt::format(
          "{} {}: port {} is in use (another exporter?); choose another port or stop that "
          "process",
          setting, where, address.port));
    case EADDRNOTAVAIL:
      throw InvalidInput(fmt::format(
          "{} {}: {} is not an address of this machine; give one of its addresses, 127.0.0.1 or "
          ":PORT for every interface",
          setting, where, address.host));
    case EACCES:
      throw InvalidInput(fmt::format(
          "{} {}: ports below 1024 need root; choose a port of 1024 or more (e.g. 9464)", setting,
          where));
    default:
      throw InvalidInput(
          fmt::format("{} {}: cannot listen there: {}", setting, where, std::strerror(error)));
  }
}

std::string access_control_list(std::string_view allow, std::string_view setting) {
  if (trim(allow).empty()) return "";
  std::string v4 = "-0.0.0.0/0", v6;
  for (const std::string& entry : split_trimmed(allow, ',')) {
    const auto slash = entry.find('/');
    const std::string address = entry.substr(0, slash);
    const bool is_v6 = address.find(':') != std::string::npos;
    unsigned char buffer[sizeof(in6_addr)];
    int prefix = is_v6 ? 128 : 32;
    bool ok = ::inet_pton(is_v6 ? AF_INET6 : AF_INET, address.c_str(), buffer) == 1;
    if (ok && slash != std::string::npos) {
      const std::string bits = entry.substr(slash + 1);
      const auto [end, error] = std::from_chars(bits.data(), bits.data() + bits.size(), prefix);
      ok = !bits.empty() && error == std::errc() && end == bits.data() + bits.size() &&
           prefix >= 0 && prefix <= (is_v6 ? 128 : 32);
    }
    if (!ok) {
      throw InvalidInput(fmt::format(
          "{} '{}': expected comma-separated addresses or CIDR ranges (127.0.0.1, 10.0.0.0/8, "
          "::1, fd00::/8), found '{}'",
          setting, allow, entry));
    }
    (is_v6 ? v6 : v4) += fmt::format(",+{}/{}", address, prefix);
  }
  return v6.empty() ? v4 : v4 + ",-::/0" + v6;
}

}  // namespace nnergy::fleet
