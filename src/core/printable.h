// Text that came from a server or a model (model ids, server kinds and versions, error bodies)
// made safe to print on a terminal or write into a report: one line of valid UTF-8 with no
// control character, so an ESC sequence, a CR that overwrites the line or a LF that forges a
// new one never reaches the reader. Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sb {

// `text` as one printable line: every control character (C0, DEL and the C1 range
// U+0080..U+009F; CR, LF and TAB included) becomes a space, invalid UTF-8 bytes become '?', and
// at most `max_bytes` bytes are kept (never half a character).
std::string PrintableLine(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// Whether `text` holds a control character (C0 or DEL), e.g. a CR or LF that would end an HTTP
// header early.
bool HasControlChar(std::string_view text);

}  // namespace sb
