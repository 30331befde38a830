// SHA-256 and base64 against the RFC test vectors; data URIs.

#include <string>

#include <gtest/gtest.h>

#include "media/media.h"

namespace sb::media {
namespace {

// FIPS 180-2 / RFC 6234 examples.
TEST(Encode, Sha256TestVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(Sha256Hex(std::string("\0", 1)),
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
}

// RFC 4648 §10, plus bytes that use the last two alphabet characters.
TEST(Encode, Base64TestVectors) {
  EXPECT_EQ(Base64(""), "");
  EXPECT_EQ(Base64("f"), "Zg==");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(Base64("\xff\xff\xff"), "////");
  EXPECT_EQ(Base64("\xfb\xff"), "+/8=");
  EXPECT_EQ(Base64(std::string("\0\0\0\0", 4)), "AAAAAA==");
}

TEST(Encode, DataUri) {
  Asset a;
  a.mime = "image/png";
  a.bytes = "\x89PNG\r\n\x1a\n";
  EXPECT_EQ(DataUri(a), "data:image/png;base64,iVBORw0KGgo=");
  auto png = Generate("probe_image");
  ASSERT_TRUE(png.has_value());
  std::string uri = DataUri(*png);
  EXPECT_EQ(uri.rfind("data:image/png;base64,iVBORw0KGgo", 0), 0u) << uri.substr(0, 40);
  EXPECT_EQ(uri.size(),
            std::string("data:image/png;base64,").size() + (png->bytes.size() + 2) / 3 * 4);
  auto wav = Generate("probe_audio");
  ASSERT_TRUE(wav.has_value());
  EXPECT_EQ(DataUri(*wav).rfind("data:audio/wav;base64,UklGR", 0), 0u);  // "RIFF"
  auto mp4 = Generate("probe_video");
  ASSERT_TRUE(mp4.has_value());
  EXPECT_EQ(DataUri(*mp4).rfind("data:video/mp4;base64,", 0), 0u);
}

}  // namespace
}  // namespace sb::media
