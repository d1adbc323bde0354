#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nnergy::fleet {

/// Where an HTTP endpoint (the Prometheus exporter) listens.
struct ListenAddress {
  std::string host;        ///< numeric IPv4 or IPv6 address ("0.0.0.0" or "::" for every interface)
  std::uint16_t port = 0;  ///< TCP port; 0 lets the kernel choose a free one
  bool ipv6 = false;
  /// As civetweb's listening_ports option takes it: "127.0.0.1:9464" or "[::1]:9464".
  std::string civetweb_option() const;
  /// As a URL's authority: "127.0.0.1:9464" or "[::1]:9464" (with the port given).
  std::string authority(std::uint16_t actual_port) const;
};

/// Parses `text` as "HOST:PORT", "[IPV6]:PORT" or ":PORT" (every interface); HOST is a numeric
/// address or a name this machine resolves ("localhost"), PORT 0 to 65535 (0: any free port).
/// Throws InvalidInput "SETTING 'TEXT': expected ..., found ..." naming `setting` (e.g.
/// "--listen") when the text is malformed or the name does not resolve.
ListenAddress parse_listen_address(std::string_view text, std::string_view setting);

/// Binds (and releases) a TCP socket at `address` to say clearly why a server could not listen
/// there: InvalidInput naming `setting` for a port in use, an address that is not this
/// machine's, or a privileged port without root. A race with another process binding it in
/// between remains possible; the server's own failure is then reported by its caller.
void check_can_listen(const ListenAddress& address, std::string_view setting);

/// Who may connect: `allow` is comma-separated addresses or CIDR ranges ("127.0.0.1",
/// "10.0.0.0/8", "::1", "fd00::/8"), returned as civetweb's access_control_list ("-0.0.0.0/0,
/// +10.0.0.0/8": everyone else refused at accept, before a worker thread is taken). "" for an
/// empty `allow` (everyone may connect). Throws InvalidInput naming `setting` (e.g. "--allow")
/// for an entry that is not an address or a prefix length out of range.
std::string access_control_list(std::string_view allow, std::string_view setting);

}  // namespace nnergy::fleet
