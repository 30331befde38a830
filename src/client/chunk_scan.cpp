#include "client/chunk_scan.h"

#include <algorithm>
#include <limits>

namespace sb::client::detail {

namespace {

constexpr int kMaxDepth = 32;

int HexValue(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

// Four hex digits at s[i..i+4), or -1.
int Hex4(std::string_view s, std::size_t i) {
  if (i + 4 > s.size()) {
    return -1;
  }
  int v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int h = HexValue(s[i + k]);
    if (h < 0) {
      return -1;
    }
    v = v * 16 + h;
  }
  return v;
}

void AppendUtf8(std::uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// One pass over the document. Every method returns false to decline (the caller then uses the
// full parser): never because the JSON is known to be invalid, only because the scanner cannot
// be sure the full parser would give the same result.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}

  bool Document(ChunkFields& f) {
    SkipWs();
    if (!TopObject(f)) {
      return false;
    }
    SkipWs();
    return i_ == s_.size();
  }

 private:
  void SkipWs() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) {
      ++i_;
    }
  }

  bool Peek(char c) const { return i_ < s_.size() && s_[i_] == c; }

  // A string starting at the opening quote: checks its escapes (with nlohmann's rules for
  // surrogates) and that it holds no control character.
  bool String(JsonText& out) {
    if (!Peek('"')) {
      return false;
    }
    ++i_;
    const std::size_t start = i_;
    bool escaped = false;
    while (true) {
      // Fast scan to the next quote, backslash or control character.
      while (i_ < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[i_]);
        if (c == '"' || c == '\\' || c < 0x20) {
          break;
        }
        ++i_;
      }
      if (i_ >= s_.size()) {
        return false;
      }
      const char c = s_[i_];
      if (c == '"') {
        out.raw = s_.substr(start, i_ - start);
        out.escaped = escaped;
        out.present = true;
        ++i_;
        return true;
      }
      if (c != '\\') {
        return false;  // a raw control character: invalid JSON
      }
      escaped = true;
      if (i_ + 1 >= s_.size()) {
        return false;
      }
      const char e = s_[i_ + 1];
      if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
          e == 't') {
        i_ += 2;
        continue;
      }
      if (e != 'u') {
        return false;
      }
      const int cp = Hex4(s_, i_ + 2);
      if (cp < 0) {
        return false;
      }
      i_ += 6;
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        return false;  // a low surrogate on its own
      }
      if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (i_ + 1 >= s_.size() || s_[i_] != '\\' || s_[i_ + 1] != 'u') {
          return false;
        }
        const int low = Hex4(s_, i_ + 2);
        if (low < 0xDC00 || low > 0xDFFF) {
          return false;
        }
        i_ += 6;
      }
    }
  }

  // A key: a string without escapes (an escaped key might spell a field we read), then ':'.
  bool Key(std::string_view& key) {
    JsonText t;
    if (!String(t) || t.escaped) {
      return false;
    }
    key = t.raw;
    SkipWs();
    if (!Peek(':')) {
      return false;
    }
    ++i_;
    SkipWs();
    return true;
  }

  // A number in JSON's grammar. Declines exponents and long numbers (the full parser refuses
  // numbers that overflow a double; short ones without exponent never do).
  bool Number(std::string_view& text, bool& integer) {
    const std::size_t start = i_;
    if (Peek('-')) {
      ++i_;
    }
    if (Peek('0')) {
      ++i_;
    } else if (i_ < s_.size() && s_[i_] >= '1' && s_[i_] <= '9') {
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        ++i_;
      }
    } else {
      return false;
    }
    integer = true;
    if (Peek('.')) {
      integer = false;
      ++i_;
      const std::size_t digits = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        ++i_;
      }
      if (i_ == digits) {
        return false;
      }
    }
    if (Peek('e') || Peek('E')) {
      return false;
    }
    text = s_.substr(start, i_ - start);
    return text.size() <= 30;
  }

  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) {
      return false;
    }
    i_ += word.size();
    return true;
  }

  // Any value, checked and skipped.
  bool Skip(int depth) {
    if (depth > kMaxDepth || i_ >= s_.size()) {
      return false;
    }
    switch (s_[i_]) {
      case '"': {
        JsonText t;
        return String(t);
      }
      case '{': {
        ++i_;
        SkipWs();
        if (Peek('}')) {
          ++i_;
          return true;
        }
        while (true) {
          JsonText key;
          if (!String(key)) {
            return false;
          }
          SkipWs();
          if (!Peek(':')) {
            return false;
          }
          ++i_;
          SkipWs();
          if (!Skip(depth + 1)) {
            return false;
          }
          if (!Next('}')) {
            return false;
          }
          if (closed_) {
            return true;
          }
        }
      }
      case '[': {
        ++i_;
        SkipWs();
        if (Peek(']')) {
          ++i_;
          return true;
        }
        while (true) {
          if (!Skip(depth + 1)) {
            return false;
          }
          if (!Next(']')) {
            return false;
          }
          if (closed_) {
            return true;
          }
        }
      }
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default: {
        std::string_view text;
        bool integer = false;
        return Number(text, integer);
      }
    }
  }

  // After a member or element: ',' (closed_ = false, ready for the next) or the closing
  // bracket (closed_ = true).
  bool Next(char close) {
    SkipWs();
    if (Peek(',')) {
      ++i_;
      SkipWs();
      closed_ = false;
      return true;
    }
    if (Peek(close)) {
      ++i_;
      closed_ = true;
      return true;
    }
    return false;
  }

  // Iterates the members of an object whose '{' is at i_: member(key) must consume the value.
  template <typename Member>
  bool Object(Member&& member) {
    if (!Peek('{')) {
      return false;
    }
    ++i_;
    SkipWs();
    if (Peek('}')) {
      ++i_;
      return true;
    }
    while (true) {
      std::string_view key;
      if (!Key(key) || !member(key) || !Next('}')) {
        return false;
      }
      if (closed_) {
        return true;
      }
    }
  }

  // A string field: strings are kept, other values skipped (the full parser ignores them).
  // Declines a repeated field (seen: the bit of this field in the object's mask).
  bool StringField(JsonText& out, unsigned bit, unsigned& seen, int depth) {
    if ((seen & bit) != 0) {
      return false;
    }
    seen |= bit;
    if (Peek('"')) {
      return String(out);
    }
    return Skip(depth);
  }

  // An integer field: an integer is kept (clamped to int), a number with a fraction declines
  // (the full parser truncates doubles; rare enough to leave to it), other values are skipped.
  bool IntField(JsonInt& out, unsigned bit, unsigned& seen, int depth) {
    if ((seen & bit) != 0) {
      return false;
    }
    seen |= bit;
    if (!(Peek('-') || (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'))) {
      return Skip(depth);
    }
    std::string_view text;
    bool integer = false;
    if (!Number(text, integer) || !integer) {
      return false;
    }
    const bool negative = text.front() == '-';
    if (negative) {
      text.remove_prefix(1);
    }
    // Up to 30 digits: saturate past int's range, as the full parser's clamp does.
    std::int64_t v = 0;
    for (const char c : text) {
      v = std::min<std::int64_t>(v * 10 + (c - '0'), std::int64_t{1} << 40);
    }
    if (negative) {
      v = -v;
    }
    out.value = static_cast<int>(std::clamp<std::int64_t>(v, std::numeric_limits<int>::min(),
                                                          std::numeric_limits<int>::max()));
    out.present = true;
    return true;
  }

  bool TopObject(ChunkFields& f) {
    unsigned seen = 0;
    return Object([&](std::string_view key) {
      if (key == "model") {
        return StringField(f.model, 1, seen, 1);
      }
      if (key == "choices") {
        if ((seen & 2) != 0) {
          return false;
        }
        seen |= 2;
        return Choices(f);
      }
      if (key == "usage") {
        if ((seen & 4) != 0) {
          return false;
        }
        seen |= 4;
        if (Peek('{')) {
          f.has_usage = true;
          return Usage(f);
        }
        return Skip(1);
      }
      if (key == "object") {
        JsonText object;
        if (!StringField(object, 8, seen, 1)) {
          return false;
        }
        // {"object":"error",...} is an error document: the full parser reports it.
        return !object.present || (!object.escaped && object.raw != "error");
      }
      if (key == "error" || key == "timings" || key == "sim") {
        return false;  // errors, llama.cpp timings, the simulator's ground truth: full parser
      }
      return Skip(1);
    });
  }

  bool Choices(ChunkFields& f) {
    if (!Peek('[')) {
      return false;  // not an array: rare, the full parser decides
    }
    ++i_;
    SkipWs();
    if (Peek(']')) {
      ++i_;
      return true;
    }
    bool first = true;
    while (true) {
      if (first) {
        if (!Choice(f)) {
          return false;
        }
        first = false;
      } else if (!Skip(2)) {
        return false;
      }
      if (!Next(']')) {
        return false;
      }
      if (closed_) {
        return true;
      }
    }
  }

  // choices[0]: taken only when it is an object with index 0 (or none); otherwise the full
  // parser looks further.
  bool Choice(ChunkFields& f) {
    unsigned seen = 0;
    f.has_choice = true;
    return Object([&](std::string_view key) {
      if (key == "index") {
        if ((seen & 1) != 0) {
          return false;
        }
        seen |= 1;
        return Literal("0") &&
               !(i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E' ||
                                    (s_[i_] >= '0' && s_[i_] <= '9')));
      }
      if (key == "delta") {
        if ((seen & 2) != 0) {
          return false;
        }
        seen |= 2;
        return Delta(f);
      }
      if (key == "finish_reason") {
        return StringField(f.finish_reason, 4, seen, 3);
      }
      if (key == "text" || key == "message") {
        return false;  // completions chunks and odd shapes: full parser
      }
      return Skip(3);
    });
  }

  bool Delta(ChunkFields& f) {
    if (!Peek('{')) {
      return false;  // null or another type: the full parser then reads "text"
    }
    unsigned seen = 0;
    return Object([&](std::string_view key) {
      if (key == "content") {
        return StringField(f.content, 1, seen, 4);
      }
      if (key == "reasoning_content") {
        return StringField(f.reasoning_content, 2, seen, 4);
      }
      if (key == "reasoning") {
        return StringField(f.reasoning, 4, seen, 4);
      }
      if (key == "tool_calls") {
        return Literal("null");  // tool-call deltas: full parser
      }
      return Skip(4);
    });
  }

  bool Usage(ChunkFields& f) {
    unsigned seen = 0;
    return Object([&](std::string_view key) {
      if (key == "prompt_tokens") {
        return IntField(f.prompt_tokens, 1, seen, 2);
      }
      if (key == "completion_tokens") {
        return IntField(f.completion_tokens, 2, seen, 2);
      }
      if (key == "reasoning_tokens") {
        return IntField(f.reasoning_tokens, 4, seen, 2);
      }
      if (key == "completion_tokens_details" || key == "prompt_tokens_details") {
        const bool completion = key.front() == 'c';
        const unsigned bit = completion ? 8 : 16;
        if ((seen & bit) != 0) {
          return false;
        }
        seen |= bit;
        if (!Peek('{')) {
          return Skip(2);
        }
        (completion ? f.completion_details : f.prompt_details) = true;
        JsonInt& target = completion ? f.details_reasoning_tokens : f.cached_tokens;
        const std::string_view wanted = completion ? "reasoning_tokens" : "cached_tokens";
        unsigned inner = 0;
        return Object([&](std::string_view k) {
          return k == wanted ? IntField(target, 1, inner, 3) : Skip(3);
        });
      }
      return Skip(2);
    });
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool closed_ = false;
};

}  // namespace

bool ScanChunk(std::string_view json, ChunkFields& fields) {
  fields = ChunkFields{};
  Scanner scanner(json);
  return scanner.Document(fields);
}

void AppendJsonText(const JsonText& text, std::string& out) {
  const std::string_view s = text.raw;
  if (!text.escaped) {
    out.append(s);
    return;
  }
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t slash = s.find('\\', i);
    if (slash == std::string_view::npos) {
      out.append(s.substr(i));
      return;
    }
    out.append(s.substr(i, slash - i));
    const char e = s[slash + 1];
    i = slash + 2;
    switch (e) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        auto cp = static_cast<std::uint32_t>(Hex4(s, i));
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // ScanChunk checked the low half follows
          const auto low = static_cast<std::uint32_t>(Hex4(s, i + 2));
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        AppendUtf8(cp, out);
        break;
      }
      default:  // '"', '\\', '/'
        out.push_back(e);
        break;
    }
  }
}

}  // namespace sb::client::detail
