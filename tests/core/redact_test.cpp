#include "core/redact.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(RedactUrl, ReplacesUserinfoOnly) {
  EXPECT_EQ(RedactUrl("http://alice:s3cret@proxy.local:8000/v1"), "http://***@proxy.local:8000/v1");
  EXPECT_EQ(RedactUrl("https://token@host/v1?x=a@b"), "https://***@host/v1?x=a@b");
  EXPECT_EQ(RedactUrl("http://127.0.0.1:8000/v1"), "http://127.0.0.1:8000/v1");
  EXPECT_EQ(RedactUrl("http://host/path@x"), "http://host/path@x");  // '@' after the authority
  EXPECT_EQ(RedactUrl("not a url"), "not a url");
}

TEST(Redact, RemovesRegisteredUrlSecretsEverywhere) {
  AddUrlSecrets("http://bob:hunter2pw@10.0.0.1:9/v1");
  EXPECT_EQ(Redact("cannot reach http://bob:hunter2pw@10.0.0.1:9: refused"),
            "cannot reach http://***@10.0.0.1:9: refused");
  EXPECT_EQ(Redact("password hunter2pw twice hunter2pw"), "password *** twice ***");
  EXPECT_EQ(Redact("nothing secret"), "nothing secret");
}

TEST(Redact, IgnoresTooShortSecrets) {
  AddSecret("ab");
  EXPECT_EQ(Redact("abc cab"), "abc cab");
}

}  // namespace
}  // namespace sb
