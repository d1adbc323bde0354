#include "nnergy/core/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace nnergy::base64 {
namespace {

// RFC 4648 §10 test vectors.
TEST(Base64, RfcVectorsRoundTrip) {
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(encode(plain), encoded);
    EXPECT_EQ(decode(encoded), plain) << encoded;
  }
}

TEST(Base64, EveryByteValueRoundTrips) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (std::size_t length = 0; length <= bytes.size(); length += 37) {
    const std::string part = bytes.substr(0, length);
    EXPECT_EQ(decode(encode(part)), part) << length;
  }
}

TEST(Base64, MalformedTextIsRejected) {
  for (const char* bad : {"Zg=", "Zm9v!A==", "Z===", "Zg==Zg==", "Zm 9v", "=Zm9"}) {
    EXPECT_FALSE(decode(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace nnergy::base64
