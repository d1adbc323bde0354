#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nnergy::test_support {

/// The status line's code and the body of GET http://127.0.0.1:PORT/PATH (HTTP/1.0, so the
/// server closes the connection after the body). Throws std::runtime_error when it cannot
/// connect.
struct HttpResponse {
  int status = 0;
  std::string body;
};

/// A TCP connection to 127.0.0.1:PORT (its descriptor), or -1 when refused.
inline int connect_local(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline HttpResponse http_get(std::uint16_t port, const std::string& path = "/metrics") {
  const int fd = connect_local(port);
  if (fd < 0) throw std::runtime_error("cannot connect to port " + std::to_string(port));
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (write(fd, request.data(), request.size()) < 0) {
    close(fd);
    throw std::runtime_error("cannot send the request");
  }
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, n);
  close(fd);
  HttpResponse result;
  if (response.rfind("HTTP/1.", 0) == 0 && response.size() > 12) {
    result.status = std::stoi(response.substr(9, 3));
  }
  const auto body = response.find("\r\n\r\n");
  if (body != std::string::npos) result.body = response.substr(body + 4);
  return result;
}

}  // namespace nnergy::test_support
