// Parsing and checking the exporter's listen address: every refusal names the flag and says
// what was expected.
#include "nnergy/fleet/listen_address.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nnergy/core/error.h"

namespace nnergy::fleet {
namespace {

using ::testing::HasSubstr;

std::string refusal(const std::string& text) {
  try {
    check_can_listen(parse_listen_address(text, "--listen"), "--listen");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(PrometheusListenAddress, ParsesHostPortForms) {
  ListenAddress a = parse_listen_address("127.0.0.1:9464", "--listen");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9464);
  EXPECT_FALSE(a.ipv6);
  EXPECT_EQ(a.civetweb_option(), "127.0.0.1:9464");
  a = parse_listen_address(":9100", "--listen");
  EXPECT_EQ(a.host, "0.0.0.0");
  EXPECT_EQ(a.port, 9100);
  a = parse_listen_address("[::1]:0", "--listen");
  EXPECT_TRUE(a.ipv6);
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.civetweb_option(), "[::1]:0");
  a = parse_listen_address("localhost:8000", "--listen");
  EXPECT_TRUE(a.host == "127.0.0.1" || a.host == "::1") << a.host;
}

TEST(PrometheusListenAddress, RefusesMalformedAddressesNamingTheFlag) {
  for (const char* text : {"9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "1.2.3.4:70000",
                           "::1:9464", "[::1]9464", "no-such-host.invalid:9464"}) {
    const std::string message = refusal(text);
    EXPECT_THAT(message, HasSubstr("--listen")) << text;
    EXPECT_THAT(message, HasSubstr("expected")) << text;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(PrometheusListenAddress, SaysWhenThePortIsInUse) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string taken = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  EXPECT_THAT(refusal(taken), HasSubstr("is in use"));
  close(fd);
  EXPECT_EQ(refusal(taken), "");
}

TEST(PrometheusListenAddress, SaysWhenTheAddressIsNotThisMachines) {
  // 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local address.
  EXPECT_THAT(refusal("192.0.2.1:9464"), HasSubstr("not an address of this machine"));
}

TEST(PrometheusAllowList, AddressesAndRangesBecomeCivetwebsAccessControlList) {
  EXPECT_EQ(access_control_list("", "--allow"), "");
  EXPECT_EQ(access_control_list("127.0.0.1, 10.0.0.0/8", "--allow"),
            "-0.0.0.0/0,+127.0.0.1/32,+10.0.0.0/8");
  EXPECT_EQ(access_control_list("::1", "--allow"), "-0.0.0.0/0,-::/0,+::1/128");
  for (const char* bad : {"10.0.0.0/33", "localhost", "10.0.0/8", "::1/129", "1.2.3.4/"}) {
    try {
      access_control_list(bad, "--allow");
      ADD_FAILURE() << bad << " accepted";
    } catch (const InvalidInput& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("--allow '"));
      EXPECT_THAT(e.what(), ::testing::HasSubstr("expected comma-separated addresses"));
    }
  }
}

}  // namespace
}  // namespace nnergy::fleet
