#include "core/redact.h"

#include <gtest/gtest.h>

namespace sb {
namespace {

TEST(RedactUrl, ReplacesUserinfoOnly) {
  EXPECT_EQ(RedactUrl("http://alice:s3cret@proxy.local:8000/v1"), "http://***@proxy.local:8000/v1");
  EXPECT_EQ(RedactUrl("https://token@host/v1?x=a@b"), "https://***@host/v1?x=***");
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

// A URL written without its scheme is a usage error whose message shows the URL: its password
// must not be in it.
TEST(RedactUrl, FindsThePasswordOfAUrlWithoutScheme) {
  EXPECT_EQ(RedactUrl("alice:pw-noscheme@127.0.0.1:8000/v1"), "***@127.0.0.1:8000/v1");
  EXPECT_EQ(RedactUrl("runs/me@home.sqlite"), "runs/me@home.sqlite");  // no password, no URL
  AddUrlSecrets("carol:pw-noscheme-2@host/v1");
  EXPECT_EQ(Redact("bad endpoint carol:pw-noscheme-2@host"), "bad endpoint ***@host");
}

TEST(RedactUrl, RedactsQueryValuesButNotConnectionSettings) {
  EXPECT_EQ(RedactUrl("http://h/v1?key=qsecret-1&b=2"), "http://h/v1?key=***&b=***");
  EXPECT_EQ(RedactUrl("postgresql://u@h/db?sslmode=require&password=x#f"),
            "postgresql://***@h/db?sslmode=require&password=***#f");
  EXPECT_EQ(RedactUrl("http://h/v1?flag"), "http://h/v1?flag");
  AddUrlSecrets("http://h/v1?key=qsecret-query-9&sslmode=disable");
  EXPECT_EQ(Redact("GET /v1/models?key=qsecret-query-9: 500"), "GET /v1/models?key=***: 500");
  EXPECT_EQ(Redact("sslmode disable"), "sslmode disable");
}

TEST(Redact, IgnoresTooShortSecrets) {
  AddSecret("ab");
  EXPECT_EQ(Redact("abc cab"), "abc cab");
}

}  // namespace
}  // namespace sb
